// The launch queue as two nodes' SessionManagers run it over one PostgreSQL database (SQLite has no queue: launches
// run on its one node): a node starts what it can at once and queues the rest with their positions, each node claims
// in order only while it has a free slot (never more than `maxSessions`), a slot freed by a session's end is taken by
// the oldest queued launch, and a queued launch killed never starts.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { ScriptedHarness } from '../../test/support/scripted-harness.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { ManualClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { ClusterNodeStore } from '../store/cluster-nodes.ts';
import { CodingSessionStore } from '../store/coding-sessions.ts';
import { LaunchQueueStore } from '../store/launch-queue.ts';
import { SessionLogs } from '../store/session-logs.ts';
import type { Database } from '../store/tables/index.ts';
import { LaunchQueue } from './launch-queue.ts';
import { SessionManager } from './session-manager.ts';

interface TestNode {
  manager: SessionManager;
  queue: LaunchQueue;
  harness: ScriptedHarness;
}

async function node(db: Kysely<Database>, root: string, name: string, clock: ManualClock): Promise<TestNode> {
  const { config } = loadConfig({
    home: join(root, name),
    env: {},
    overrides: { workspaces: [root], maxSessions: 2, node: { name } },
  });
  const harness = new ScriptedHarness('claude');
  const harnesses = { claude: harness, codex: new ScriptedHarness('codex'), gemini: new ScriptedHarness('gemini') };
  const manager = new SessionManager({
    config,
    clock,
    logger: silentLogger(),
    store: new CodingSessionStore(db),
    logs: new SessionLogs(join(root, name, 'logs'), { fsyncBatchMs: 0, now: () => clock.now() }),
    harnesses,
  });
  const nodes = new ClusterNodeStore(db);
  await nodes.join(
    {
      name,
      incarnation: `${name}-1`,
      labels: [],
      harnesses: ['claude', 'codex', 'gemini'],
      workspaces: [root],
      maxSessions: 2,
      url: null,
      startedAt: 0,
    },
    0,
  );
  const queue = new LaunchQueue({
    config,
    clock,
    logger: silentLogger(),
    sessions: manager,
    store: new LaunchQueueStore(db),
    nodes,
    ability: { name, labels: [], harnesses: ['claude'], workspaces: [root] },
    passMs: 1_000,
  });
  return { manager, queue, harness };
}

describeEachDatabase('LaunchQueue on two nodes', (fresh) => {
  test('starts here what fits, queues the rest in order, and never exceeds maxSessions', async (t) => {
    const { db, dialect } = await fresh();
    if (dialect === 'sqlite') return t.skip('the launch queue runs on PostgreSQL only');
    const dir = tempDir('sb-queue-');
    t.after(() => dir.remove());
    const workdir = join(dir.path, 'work');
    mkdirSync(workdir, { recursive: true });
    const clock = new ManualClock();
    const alpha = await node(db, dir.path, 'alpha', clock);
    const beta = await node(db, dir.path, 'beta', clock);
    t.after(async () => {
      await alpha.manager.stop();
      await beta.manager.stop();
    });
    const launch = (n: number) =>
      alpha.queue.launch({ prompt: `task ${n}`, name: `task-${n}`, workdir, originChannel: 'cli' }, {});
    const placed = [];
    for (const n of [1, 2, 3, 4, 5]) placed.push(await launch(n));
    assert.deepEqual(
      placed.map((p) => [p.record.name, p.record.status, p.record.node, p.position]),
      [
        ['task-1', 'starting', 'alpha', null],
        ['task-2', 'starting', 'alpha', null],
        ['task-3', 'queued', null, 1],
        ['task-4', 'queued', null, 2],
        ['task-5', 'queued', null, 3],
      ],
    );
    // Both look at once: alpha is full, beta takes the two oldest.
    const [fromAlpha, fromBeta] = await Promise.all([alpha.queue.pass(), beta.queue.pass()]);
    assert.deepEqual(fromAlpha, []);
    assert.deepEqual(
      fromBeta.map((s) => s.name),
      ['task-3', 'task-4'],
    );
    const store = new CodingSessionStore(db);
    assert.deepEqual([...(await store.activeByNode())].sort(), [
      ['alpha', 2],
      ['beta', 2],
    ]);
    assert.deepEqual(await Promise.all([alpha.queue.pass(), beta.queue.pass()]), [[], []]);

    // A queued launch killed never starts.
    const sixth = await launch(6);
    assert.equal(sixth.position, 2);
    assert.equal((await alpha.manager.kill('task-6')).status, 'killed');

    // A session ends on beta: beta's next pass takes the oldest queued launch, and only it.
    const run = beta.harness.runs.find((r) => r.spec.prompt === 'task 3');
    assert.ok(run);
    await run.emit({ type: 'started', backendSessionId: 'b3' }, { type: 'exited', code: 0 });
    await beta.manager.get('task-3');
    const again = await beta.queue.pass();
    assert.deepEqual(
      again.map((s) => [s.name, s.record.node]),
      [['task-5', 'beta']],
    );
    assert.equal((await store.get(sixth.record.id))?.status, 'killed');
    assert.deepEqual(await beta.queue.pass(), []);

    // A launch continuing task-3's agent session waits for the node that holds its history.
    const fork = await alpha.queue.launch(
      { prompt: 'try another way', workdir, originChannel: 'cli', resumeSessionRef: 'task-3', forkSession: true },
      {},
    );
    const row = await db
      .selectFrom('coding_sessions')
      .select('place_on')
      .where('id', '=', fork.record.id)
      .executeTakeFirst();
    assert.equal(row?.place_on, 'beta');
  });
});

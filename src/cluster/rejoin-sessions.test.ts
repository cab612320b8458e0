// A session launched on a stalled node after the others took it over (before its next beat showed it was declared
// down) is marked interrupted ("node <name> lost") by that node itself when it rejoins, announced once (the same
// compare-and-swap as the taker's); and while the node is not serving, a launch reaching its SessionManager is refused.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { ScriptedHarness } from '../../test/support/scripted-harness.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { BEAT_MS, NODE_TIMEOUT_MS, silence, testNode } from '../../test/support/test-nodes.ts';
import { interruptLostNode } from '../coding/lost-node.ts';
import { SessionManager } from '../coding/session-manager.ts';
import { ManualClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { AppError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { CodingSessionStore } from '../store/coding-sessions.ts';
import { RestartNoticeStore } from '../store/restart-notices.ts';
import { SessionLogs } from '../store/session-logs.ts';

describeEachDatabase('the sessions of a node that rejoins', (fresh) => {
  it('marks the sessions it launched after the takeover interrupted, each announced once', async () => {
    const { db } = await fresh();
    const dir = tempDir('sb-rejoin-');
    const workdir = join(dir.path, 'work');
    mkdirSync(workdir, { recursive: true });
    const { config } = loadConfig({
      home: dir.path,
      env: {},
      overrides: { workspaces: [dir.path], node: { name: 'a' } },
    });
    const clock = new ManualClock();
    const a = testNode(db, clock, 'a');
    const b = testNode(db, clock, 'b');
    const store = new CodingSessionStore(db);
    const notices = new RestartNoticeStore(db);
    const harness = new ScriptedHarness('claude');
    const manager = new SessionManager({
      config,
      clock,
      logger: silentLogger(),
      store,
      logs: new SessionLogs(join(dir.path, 'logs-a'), { fsyncBatchMs: 0, now: () => clock.now() }),
      harnesses: { claude: harness, codex: new ScriptedHarness('codex', false), gemini: new ScriptedHarness('gemini') },
      notices,
      serving: () => !a.fenced,
    });
    const announced: string[] = [];
    // b takes a over as main.ts does: marks a's sessions interrupted, announces what is owed, records it announced.
    const takerLogs = new SessionLogs(join(dir.path, 'logs-b'), { fsyncBatchMs: 0, now: () => clock.now() });
    const takeOver = async (name: string): Promise<void> => {
      const owed = await interruptLostNode({ store, logs: takerLogs, clock, logger: silentLogger(), notices }, name);
      announced.push(...owed.map((id) => `b:${id}`));
      await notices.done(owed);
    };
    b.onNodeDown('sessions', (down) => takeOver(down.name));
    let refused: unknown = null;
    a.onRejoin('sessions', {
      leave: async () => {
        refused = await manager.launch({ prompt: 'p', workdir, originChannel: 'cli' }).catch((error: unknown) => error);
        manager.abandonAll('node a lost');
        const owed = await manager.interruptNode('a', { spareLive: true });
        announced.push(...owed.map((id) => `a:${id}`));
        await manager.restartNoticesStored(owed);
      },
      resume: async () => {},
    });
    const launch = async (prompt: string): Promise<string> => {
      const session = await manager.launch({ prompt, workdir, originChannel: 'cli' });
      await harness.last.emit({ type: 'started', backendSessionId: `b-${prompt}` });
      await session.stored;
      return session.id;
    };
    try {
      await a.start();
      await b.start();
      const early = await launch('early');

      // a stalls: b declares it down and interrupts what it ran then. Before a's next beat, a launches one more.
      await silence(clock, [b], NODE_TIMEOUT_MS + BEAT_MS);
      assert.deepEqual(announced, [`b:${early}`]);
      assert.equal(a.fenced, false, 'a has not seen it yet');
      const late = await launch('late');
      assert.equal((await store.get(late))?.status, 'running');

      // a's next beat: it leaves (launches refused, agents stopped), marks the late one itself, and rejoins.
      await a.beat();
      assert.equal(a.state, 'up');
      assert.ok(refused instanceof AppError && refused.kind === 'unavailable', String(refused));
      assert.match(String(refused), /node a is not serving/);
      assert.equal(harness.last.killed, true);
      const row = await store.get(late);
      assert.deepEqual([row?.status, row?.endReason], ['interrupted', 'node a lost']);
      assert.deepEqual(announced, [`b:${early}`, `a:${late}`]);

      // A taker running its step again (after a crash) finds nothing left to mark or announce.
      await takeOver('a');
      assert.deepEqual(announced, [`b:${early}`, `a:${late}`]);

      // Serving again: it launches, and marking what it left behind spares its live sessions.
      const after = await launch('after');
      assert.deepEqual(await manager.interruptNode('a', { spareLive: true }), []);
      assert.equal((await store.get(after))?.status, 'running');
    } finally {
      await manager.stop();
      await a.stop();
      await b.stop();
      dir.remove();
    }
  });
});

// Three real daemon processes on one PostgreSQL, with different capacities and labels: launches spread over the nodes
// by their free slots and labels, `on` and `labels` are honoured, a launch no node could ever run is refused at once,
// over-capacity launches wait queued (in order, with their position) and start when a slot frees, a queued launch can
// be killed (it never starts), and no node ever runs more than its `maxSessions`.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ClusterRig } from '../support/cluster-rig.ts';
import { startClusterRig } from '../support/cluster-rig.ts';
import { postgresSkip } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

interface Summary {
  id: string;
  name: string;
  status: string;
  node: string | null;
  queuePosition?: number;
}

const CAPACITY: Record<string, number> = { alpha: 1, beta: 2, gamma: 1 };
const WEB = { channels: { web: { enabled: true } } };

describe('placement and the launch queue on a cluster of three', { skip: postgresSkip() }, () => {
  let rig: ClusterRig | undefined;
  let workdir = '';

  before(async () => {
    rig = await startClusterRig('sb-cluster-place-', [
      { name: 'alpha', labels: ['linux'], maxSessions: CAPACITY.alpha ?? 0, config: WEB },
      { name: 'beta', labels: ['gpu', 'linux'], maxSessions: CAPACITY.beta ?? 0, config: WEB },
      { name: 'gamma', maxSessions: CAPACITY.gamma ?? 0, config: WEB },
    ]);
    workdir = join(rig.dir.path, 'work');
    mkdirSync(workdir, { recursive: true });
  });

  after(async () => {
    await rig?.stop();
  });

  /** Sessions starting or running per node, read from the shared database; asserts none is over its capacity. */
  async function runningPerNode(): Promise<Record<string, number>> {
    const rows = await rig?.db
      .selectFrom('coding_sessions')
      .select(['node'])
      .where('status', 'in', ['starting', 'running'])
      .execute();
    const counts: Record<string, number> = {};
    for (const { node } of rows ?? []) if (node) counts[node] = (counts[node] ?? 0) + 1;
    for (const [node, n] of Object.entries(counts)) assert.ok(n <= (CAPACITY[node] ?? 0), `${node} runs ${n}`);
    return counts;
  }

  it('refuses at once a launch no node could ever run, naming why', async () => {
    const alpha = rig?.node('alpha');
    assert.ok(alpha);
    await assert.rejects(alpha.rpc('sessions.launch', { prompt: 'x', workdir, on: 'delta' }), /no node named "delta"/);
    await assert.rejects(alpha.rpc('sessions.launch', { prompt: 'x', workdir, labels: ['tpu'] }), /labels tpu/);
    await assert.rejects(
      alpha.rpc('sessions.launch', { prompt: 'x', workdir, on: 'gamma', labels: ['gpu'] }),
      /node gamma .*labels gpu/,
    );
    await assert.rejects(
      alpha.rpc('sessions.launch', { prompt: 'x', workdir: '/nowhere/at/all' }),
      /holds \/nowhere\/at\/all in its workspaces/,
    );
    assert.equal((await rig?.db.selectFrom('coding_sessions').select('id').execute())?.length, 0);
  });

  it('honours on and labels, spreads by free slots, queues the rest in order and starts them as slots free', async () => {
    if (!rig) throw new Error('no rig');
    const alpha = rig.node('alpha');
    const gammaPinned = await alpha.rpc<Summary>('sessions.launch', {
      prompt: '[[hang]] pinned',
      workdir,
      name: 'pinned',
      on: 'gamma',
    });
    const gpu = await rig.node('gamma').rpc<Summary>('sessions.launch', {
      prompt: '[[hang]] gpu work',
      workdir,
      name: 'gpu',
      labels: ['gpu'],
    });
    const placed = await waitFor('both placed', async () => {
      const got = await Promise.all(
        [gammaPinned.id, gpu.id].map((id) => alpha.rpc<Summary>('sessions.get', { session: id })),
      );
      return got.every((s) => s.status === 'running') ? got : undefined;
    });
    assert.deepEqual(
      placed.map((s) => s.node),
      ['gamma', 'beta'],
    );

    // Two slots left (alpha 1, beta 1): four more launches, two start and two wait, in order.
    const more: Summary[] = [];
    for (const i of [1, 2, 3, 4])
      more.push(
        await rig.node(i % 2 === 0 ? 'beta' : 'alpha').rpc<Summary>('sessions.launch', {
          prompt: `[[hang]] job ${i}`,
          workdir,
          name: `job-${i}`,
          channel: 'web|cluster-chat',
        }),
      );
    // Each answer says queued (with its position) or started. Under load a launch can be answered `queued` and be
    // claimed a moment later (a pass already running on its node), so what is checked is where the cluster settles.
    for (const s of more) if (s.status === 'queued') assert.ok((s.queuePosition ?? 0) >= 1, `${s.name} has a position`);
    await waitFor('the cluster full', async () => {
      const counts = await runningPerNode();
      return counts.alpha === 1 && counts.beta === 2 && counts.gamma === 1;
    });
    const now = await Promise.all(more.map((s) => alpha.rpc<Summary>('sessions.get', { session: s.id })));
    // In order: the first two launched started, the last two wait.
    assert.deepEqual(
      now.map((s) => (s.status === 'starting' ? 'running' : s.status)),
      ['running', 'running', 'queued', 'queued'],
    );
    const queued = now.filter((s) => s.status === 'queued');
    const [first, second] = queued;
    assert.ok(first && second);
    // A queued launch can be killed: it never starts.
    const killed = await rig.node('gamma').rpc<Summary>('sessions.kill', { session: second.id });
    assert.equal(killed.status, 'killed');

    // A slot frees on beta (its gpu session is killed): the oldest queued launch starts there, and only it.
    await rig.node('beta').rpc('sessions.kill', { session: gpu.id });
    const started = await waitFor('the first queued launch started', async () => {
      const got = await alpha.rpc<Summary>('sessions.get', { session: first.id });
      return got.status === 'running' ? got : undefined;
    });
    assert.equal(started.node, 'beta');
    await runningPerNode();
    assert.equal((await alpha.rpc<Summary>('sessions.get', { session: second.id })).status, 'killed');
    const listed = await alpha.rpc<{ sessions: Summary[] }>('sessions.list', {});
    assert.equal(listed.sessions.filter((s) => s.status === 'queued').length, 0);
    const runs = await rig.db.selectFrom('session_runs').select('session_id').execute();
    assert.equal(runs.filter((r) => r.session_id === second.id).length, 0, 'the killed launch never ran');
    assert.equal(runs.filter((r) => r.session_id === first.id).length, 1, 'the started launch ran once');
    // Its chat is told when it starts (once), as for any launch; the killed one is never announced.
    const launched = (name: string) =>
      rig?.db
        .selectFrom('web_messages')
        .select('text')
        .where('chat_id', '=', 'cluster-chat')
        .where('text', 'like', `%[${name}] Launched%`)
        .execute();
    const told = await waitFor('the queued launch announced', async () => {
      const rows = await launched(first.name);
      return rows && rows.length > 0 ? rows : undefined;
    });
    assert.equal(told.length, 1);
    assert.deepEqual(await launched(second.name), []);
  });
});

// A kill resolves once everything it changed is stored: the session's row and its run's end (the stats count runs).
// Over PostgreSQL's pool the run's end, recorded on the kill's `ended` signal, could commit after kill() resolved.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { managerPerTestOn, openManagerFixture } from '../../test/support/manager-on-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { CodingSessionStore } from '../store/coding-sessions.ts';

/** A store whose run ends commit a macrotask late, as a busy pool's would. */
class LateRunEnds extends CodingSessionStore {
  readonly order: string[] = [];
  override async endRun(...args: Parameters<CodingSessionStore['endRun']>): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    await super.endRun(...args);
    this.order.push('run ended');
  }
}

describe('SessionManager kill', () => {
  const { f } = managerPerTestOn((path) => openTestStore(path));

  it("resolves after the run's end committed, however late it commits", async () => {
    let store: LateRunEnds | undefined;
    const g = await openManagerFixture(
      (path) => openTestStore(path),
      {},
      { store: (db) => (store = new LateRunEnds(db)) },
    );
    try {
      const session = await g.manager.launch({ prompt: 'p', workdir: g.workdir, originChannel: 'cli' });
      await g.harness.last.emit({ type: 'started', backendSessionId: 'b' });
      await g.manager.kill(session.id);
      store?.order.push('kill resolved');
      assert.deepEqual(store?.order, ['run ended', 'kill resolved']);
    } finally {
      await g.close();
    }
  });

  it('stats read right after each kill count every run killed, its cost and duration', async () => {
    for (let i = 1; i <= 5; i += 1) {
      const session = await f.manager.launch({ prompt: `job ${i}`, workdir: f.workdir, originChannel: 'cli' });
      await f.harness.last.emit(
        { type: 'started', backendSessionId: `b-${i}` },
        { type: 'turnEnd', outcome: { ok: true }, costUsd: 1 },
      );
      f.clock.advance(1_000);
      assert.equal((await f.manager.kill(session.id)).status, 'killed');
      const stats = await f.manager.stats();
      assert.deepEqual(
        [stats.sessionsByStatus.killed, stats.sessionsByStatus.running, stats.totalCostUsd, stats.averageDurationMs],
        [i, 0, i, 1_000],
      );
    }
  });
});

describe('SessionManager abandonAll (a node the cluster declared lost)', () => {
  const { f, signals } = managerPerTestOn((path) => openTestStore(path));

  it('stops every agent and stores nor announces anything more about their sessions', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' });
    await session.stored;
    // Another node takes this one over: it marks the session interrupted.
    await f.store.update(session.id, { status: 'interrupted', endReason: 'node vm lost', completedAt: 1 });
    const before = signals.length;
    assert.equal(f.manager.abandonAll('node vm lost'), 1);
    assert.equal(f.harness.last.killed, true, 'the agent was stopped');
    await waitFor('the agent to exit', () => !session.isActive);
    await session.stored;
    const stored = await f.manager.get(session.id);
    assert.deepEqual([stored.status, stored.endReason], ['interrupted', 'node vm lost'], 'the row is left as marked');
    assert.equal(signals.length, before, 'no end announced from here');
    assert.equal(f.manager.liveById(session.id), undefined);
    const runs = await f.db
      .selectFrom('session_runs')
      .select(['status'])
      .where('session_id', '=', session.id)
      .execute();
    assert.deepEqual(
      runs.map((r) => r.status),
      ['running'],
      'the run is left for the taker',
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { managerPerTestOn } from '../../test/support/manager-on-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { summarize } from '../operations/session-summary.ts';

const turn = (costUsd: number) => ({ type: 'turnEnd', outcome: { ok: true }, costUsd }) as const;

describe('Session stats', () => {
  const { f } = managerPerTestOn((path) => openTestStore(path));

  it('count what running sessions have spent so far, not only finished ones', async () => {
    const session = await f.manager.launch({ prompt: 'still going', workdir: f.workdir, originChannel: 'cli' });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' }, turn(0.25));
    await f.manager.send(session.id, 'more', { source: 'user' });
    await run.emit(turn(0.5));
    assert.equal(session.status, 'running');
    // The turn's cost is written behind the signal (over PostgreSQL's pool it may not have committed yet): stats waits.
    const m = await f.manager.stats();
    assert.equal(m.totalCostUsd, 0.75);
    assert.deepEqual(m.costPerDay, { '2026-01-01': 0.75 });
    assert.deepEqual(m.mostExpensive, { id: session.id, name: 'still-going', costUsd: 0.75, prompt: 'still going' });
    assert.equal(m.sessionsByStatus.running, 1);
    assert.equal(m.averageDurationMs, 0, 'no run has finished yet');
  });

  it('count a session that has just ended, while the end of its run is still being committed', async () => {
    const endRun = f.store.endRun.bind(f.store);
    const committing = Promise.withResolvers<void>();
    f.store.endRun = async (...args) => {
      await committing.promise;
      return endRun(...args);
    };
    try {
      const session = await f.manager.launch({
        prompt: 'one turn',
        workdir: f.workdir,
        originChannel: 'cli',
        multiTurn: false,
      });
      await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, turn(0.3));
      assert.equal(session.status, 'completed');
      const stats = f.manager.stats();
      setImmediate(() => committing.resolve());
      const m = await stats;
      assert.deepEqual(m.sessionsByStatus, { completed: 1, failed: 0, killed: 0, interrupted: 0, running: 0 });
      assert.equal(m.totalCostUsd, 0.3);
    } finally {
      f.store.endRun = endRun;
    }
  });

  it('keep the cost of a run cut off by a crash', async () => {
    const session = await f.manager.launch({ prompt: 'crashy', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, turn(0.4));
    await session.stored; // the cost committed before the crash (over PostgreSQL's pool it lands after the emit)
    const after = await f.reopen();
    try {
      await after.manager.restore();
      assert.equal((await after.manager.stats()).totalCostUsd, 0.4);
    } finally {
      await after.close();
    }
  });

  it('round dollar amounts in JSON to 1e-6', async () => {
    const session = await f.manager.launch({ prompt: 'cheap turns', workdir: f.workdir, originChannel: 'cli' });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' });
    for (const cost of [0.00012, 0.1 + 0.2 - 0.3 + 0.0006]) {
      await run.emit(turn(cost));
      await f.manager.send(session.id, 'again', { source: 'user' });
    }
    await f.manager.kill(session.id);
    const m = await f.manager.stats();
    const json = JSON.stringify({
      stats: m,
      summary: summarize(await f.manager.get(session.id), undefined, f.clock.now()),
      log: f.logs.read(session.id),
    });
    assert.doesNotMatch(json, /\d\.\d{7,}/, `no float noise in ${json}`);
    assert.equal(m.totalCostUsd, 0.00072);
    assert.equal(session.record.costUsd, 0.00072);
  });
});

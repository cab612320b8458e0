// The scheduler, the heartbeat and the wake router over the real engine (scripted inference): the contract as the
// engine implements it, not only as the recording fake does.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { EngineFixture } from '../../../test/support/engine-fixture.ts';
import { engineFixture } from '../../../test/support/engine-fixture.ts';
import type { StoreManagerFixture } from '../../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../../test/support/manager-on-store.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { silentLogger } from '../../core/logger.ts';
import { WakeEventStore } from '../../store/wake-events.ts';
import { createWakeRouter } from '../wake/wake-router.ts';
import type { Scheduler } from './scheduler.ts';
import { createScheduler } from './scheduler.ts';

const ok = { type: 'turnEnd', outcome: { ok: true }, costUsd: 0 } as const;

describe('scheduler and wakes over the real engine', { timeout: 30_000 }, () => {
  let fx: EngineFixture;
  let f: StoreManagerFixture;
  let scheduler: Scheduler;

  afterEach(async () => {
    await scheduler.stop();
    await fx.engine.idle();
    await fx.close();
    await f.close();
  });

  it('fires cron runs into their cron session and heartbeat runs into the heartbeat session; wakes follow the route', async () => {
    fx = await engineFixture({
      overrides: { scheduler: { timezone: 'UTC' } },
      open: (path) => openTestStore(path),
    });
    f = await openManagerFixture((path) => openTestStore(path));
    scheduler = createScheduler({
      db: fx.db,
      engine: fx.engine,
      clock: fx.clock,
      logger: silentLogger(),
      config: fx.config,
    });
    await scheduler.start();
    const task = await scheduler.cron.add({ name: 'nightly', schedule: '*/5 * * * *', prompt: 'run the checks' });
    // Minute by minute: the timer wakes at least every scheduler.maxWaitMs and re-arms once the store answered.
    for (let minute = 0; minute < 5; minute++) {
      fx.clock.advance(60_000);
      await scheduler.cron.idle();
    }
    const cron = fx.engine.listSessions().find((s) => s.descriptor.type === 'cron');
    assert.deepEqual(cron?.descriptor, { type: 'cron', id: task.id });
    assert.ok(fx.records(cron?.id ?? '').some((r) => typeof r.text === 'string' && r.text.endsWith('run the checks')));
    assert.equal((await scheduler.cron.get('nightly')).runs[0]?.sessionId, cron?.id);

    // No user session and no heartbeat session yet: a wake runs the heartbeat, which creates its session.
    const wake = createWakeRouter({
      db: f.db,
      sessions: f.manager,
      engine: fx.engine,
      heartbeat: scheduler.heartbeat,
      clock: f.clock,
      logger: silentLogger(),
      config: f.config,
    });
    await wake.start();
    await f.manager.launch({ prompt: 'p', name: 'alpha', workdir: f.workdir, originChannel: 'cli', multiTurn: false });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-1' }, { type: 'text', text: 'alpha done' }, ok);
    await wake.idle();
    const heartbeat = fx.engine.listSessions().find((s) => s.descriptor.type === 'heartbeat');
    assert.ok(heartbeat, 'the heartbeat session was created by the wake');
    assert.ok(
      fx
        .records(heartbeat.id)
        .some((r) => typeof r.text === 'string' && /\(wake\)[\s\S]*Coding session "alpha"/.test(r.text)),
    );

    // Now the heartbeat session exists: the next wake is a system message to it.
    await f.manager.launch({ prompt: 'p', name: 'beta', workdir: f.workdir, originChannel: 'cli', multiTurn: false });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-2' }, { type: 'text', text: 'beta done' }, ok);
    await wake.idle();
    // A person writes: the foreground session takes the next wake.
    const user = await fx.engine.acceptUserMessage({
      id: 'm1',
      target: { channel: 'telegram', chat: '42' },
      userId: '42',
      text: 'hi',
      receivedAt: 0,
    });
    await f.manager.launch({ prompt: 'p', name: 'gamma', workdir: f.workdir, originChannel: 'cli', multiTurn: false });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-3' }, { type: 'text', text: 'gamma done' }, ok);
    await wake.idle();
    assert.equal((await wake.stats()).pending, 0);
    const [gamma, beta, alpha] = await new WakeEventStore(f.db).recent('delivered', 3);
    assert.deepEqual([alpha?.via, beta?.via, gamma?.via], ['heartbeat-run', 'heartbeat', 'most-recent-foreground']);
    assert.equal(beta?.targetSessionId, heartbeat.id);
    assert.equal(gamma?.targetSessionId, user.sessionId);
    await wake.stop();
  });
});

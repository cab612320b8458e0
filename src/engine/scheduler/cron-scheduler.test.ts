import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import { RecordingEngine } from '../../../test/support/recording-engine.ts';
import { SteppingClock } from '../../../test/support/stepping-clock.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import type { TestStore } from '../../../test/support/test-store.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import type { Clock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config-load.ts';
import { AppError } from '../../core/errors.ts';
import { CronTaskStore } from '../../store/cron-tasks.ts';
import { CronScheduler } from './cron-scheduler.ts';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const MIN = 60_000;
const H = 60 * MIN;

/** One daemon lifetime: its own clock and database connection over the shared state directory. */
interface Daemon {
  clock: SteppingClock;
  db: TestStore;
  store: CronTaskStore;
  scheduler: CronScheduler;
  log: ReturnType<typeof captureLogger>;
}

describe('CronScheduler', () => {
  let dir: { path: string; remove: () => void };
  let engine: RecordingEngine;
  let daemons: Daemon[];

  async function boot(at: number, overrides: Record<string, unknown> = {}, lagMs = 0): Promise<Daemon> {
    const { config } = loadConfig({
      home: dir.path,
      env: {},
      overrides: { 'scheduler.timezone': 'UTC', ...overrides },
    });
    const posts = engine;
    let scheduler: CronScheduler | undefined = undefined;
    // Each timer's work settles before time moves on: the scheduler is idle (its store writes committed), or its post
    // hangs as the test asked (a daemon "dying" there). Over PostgreSQL's pool that takes more than a macrotask.
    const clock = new SteppingClock(at, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.race([scheduler?.idle(), posts.whenHeld()]);
    });
    // A lagging timer stands for a machine that slept: every wait ends `lagMs` late.
    const timers: Clock = {
      now: () => clock.now(),
      after: (ms, fn) => clock.after(ms + lagMs, fn),
      every: (ms, fn) => clock.every(ms, fn),
    };
    const db = await openTestStore(join(dir.path, 'state.db'));
    const store = new CronTaskStore(db.db);
    const log = captureLogger();
    scheduler = new CronScheduler({ store, engine, clock: timers, logger: log.logger, config });
    const daemon = { clock, db, store, scheduler, log };
    daemons.push(daemon);
    return daemon;
  }

  async function advance(d: Daemon, ms: number): Promise<void> {
    await d.clock.advance(ms);
    await d.scheduler.idle();
  }

  beforeEach(() => {
    dir = tempDir();
    engine = new RecordingEngine();
    daemons = [];
  });
  afterEach(async () => {
    for (const d of daemons) await d.db.close();
    dir.remove();
  });

  it('validates tasks, naming the field', async () => {
    const d = await boot(T0);
    await d.scheduler.start();
    const cases: [Parameters<CronScheduler['add']>[0], string, RegExp][] = [
      [{ name: 'a', schedule: '* * * * * *', prompt: 'p' }, 'schedule', /6 fields/],
      [{ name: 'a', schedule: '0 9 * * *', prompt: 'p', timezone: 'Nowhere/City' }, 'timezone', /IANA/],
      [{ name: 'bad name!', schedule: '0 9 * * *', prompt: 'p' }, 'name', /letters, digits/],
      [{ name: 'a', schedule: '0 9 * * *', prompt: '   ' }, 'prompt', /empty/],
    ];
    for (const [input, field, pattern] of cases) {
      await assert.rejects(
        d.scheduler.add(input),
        (e: unknown) => e instanceof AppError && e.field === field && pattern.test(e.message),
      );
    }
    await d.scheduler.add({ name: 'a', schedule: '0 9 * * *', prompt: 'p' });
    await assert.rejects(d.scheduler.add({ name: 'a', schedule: '0 9 * * *', prompt: 'p' }), /already exists/);
    await d.scheduler.stop();
  });

  it('fires each task into its own cron session at its due time, in due-time then creation order', async () => {
    const d = await boot(T0);
    await d.scheduler.start();
    const late = await d.scheduler.add({ name: 'late', schedule: '30 0 * * *', prompt: 'late prompt' });
    const first = await d.scheduler.add({ name: 'first', schedule: '15 0 * * *', prompt: 'first prompt' });
    // Creation order is the creation time: tasks made in the same millisecond are listed by id.
    await d.clock.advance(1);
    const second = await d.scheduler.add({ name: 'second', schedule: '15 0 * * *', prompt: 'second prompt' });
    await advance(d, 14 * MIN);
    assert.equal(engine.posts.length, 0);
    await advance(d, 1 * MIN);
    await advance(d, 15 * MIN);
    assert.deepEqual(
      engine.posts.map((p) => [p.descriptor, p.origin]),
      [
        [{ type: 'cron', id: first.id }, 'cron:first'],
        [{ type: 'cron', id: second.id }, 'cron:second'],
        [{ type: 'cron', id: late.id }, 'cron:late'],
      ],
    );
    assert.match(
      engine.posts[0]?.text ?? '',
      /^\[Scheduled task "first" \(.+\) — run due 2026-01-01T00:15:00.000Z\]\n\nfirst prompt$/,
    );
    assert.equal(engine.posts[0]?.messageId, `cron-${first.id}-${T0 + 15 * MIN}`);
    const info = await d.scheduler.get('first');
    assert.equal(info.lastRunAt, T0 + 15 * MIN);
    assert.equal(info.nextRunAt, T0 + 24 * H + 15 * MIN);
    assert.deepEqual(
      info.runs.map((r) => [r.kind, r.status, r.dueAt]),
      [['scheduled', 'posted', T0 + 15 * MIN]],
    );
    await d.scheduler.stop();
  });

  it('posts to the engine before it records the run, and never fires a due time twice', async () => {
    const d = await boot(T0);
    await d.scheduler.start();
    const task = await d.scheduler.add({ name: 'q', schedule: '*/10 * * * *', prompt: 'check' });
    const seen: { status: string | undefined; lastRunAt: number | null }[] = [];
    engine.onPost = async () => {
      const run = (await d.store.runs(task.id, 1))[0];
      seen.push({ status: run?.status, lastRunAt: (await d.store.resolve(task.id))?.lastRunAt ?? null });
    };
    await advance(d, 10 * MIN);
    assert.deepEqual(seen, [{ status: 'posting', lastRunAt: null }]);
    assert.equal((await d.store.runs(task.id, 1))[0]?.status, 'posted');

    // Even when the next due time is set back to one already fired, it does not fire again.
    await d.store.setNextRun(task.id, T0 + 10 * MIN);
    await advance(d, 1 * MIN);
    assert.equal(engine.posts.length, 1);
    assert.equal((await d.store.resolve(task.id))?.nextRunAt, T0 + 20 * MIN);
    // The store refuses a second intent for a due time already claimed.
    const again0 = {
      taskId: task.id,
      dueAt: T0 + 10 * MIN,
      kind: 'scheduled' as const,
      missed: 0,
      firstMissedAt: null,
      prompt: 'x',
      messageId: 'other',
      now: d.clock.now(),
      nextRunAt: null,
    };
    assert.equal(await d.store.beginRun(again0), null);
    assert.equal((await d.store.resolve(task.id))?.nextRunAt, T0 + 20 * MIN);

    // A restart at the same time does not fire it either.
    await d.scheduler.stop();
    const again = await boot(d.clock.now());
    await again.scheduler.start();
    await advance(again, 5 * MIN);
    assert.equal(engine.posts.length, 1);
    await advance(again, 4 * MIN);
    assert.deepEqual(
      engine.posts.map((p) => p.messageId),
      [`cron-${task.id}-${T0 + 10 * MIN}`, `cron-${task.id}-${T0 + 20 * MIN}`],
    );
    await again.scheduler.stop();
  });

  for (const policy of ['skip', 'run-once'] as const) {
    it(`after a restart, applies missedRuns = ${policy} to runs missed while the daemon was down`, async () => {
      const d = await boot(T0, { 'scheduler.missedRuns': policy });
      await d.scheduler.start();
      const task = await d.scheduler.add({ name: 'hourly', schedule: '0 * * * *', prompt: 'report' });
      await advance(d, 1 * H);
      assert.equal(engine.runs.length, 1);
      await d.scheduler.stop();

      // Down from 01:00 to 06:30: the runs due 02:00 … 06:00 were missed.
      const up = await boot(T0 + 6 * H + 30 * MIN, { 'scheduler.missedRuns': policy });
      await up.scheduler.start();
      const runs = await up.store.runs(task.id, 5);
      if (policy === 'skip') {
        assert.equal(engine.runs.length, 1);
        assert.deepEqual(
          runs.map((r) => [r.kind, r.status, r.missed, r.firstMissedAt, r.dueAt]),
          [
            ['missed', 'skipped', 5, T0 + 2 * H, T0 + 6 * H],
            ['scheduled', 'posted', 0, null, T0 + H],
          ],
        );
        assert.equal(up.log.find('warn', /skipped \(scheduler.missedRuns = skip\)/).length, 1);
      } else {
        assert.equal(engine.runs.length, 2);
        assert.match(
          engine.runs[1]?.text ?? '',
          /catch-up run: 5 runs were missed while switchboard was down \(first due 2026-01-01T02:00:00.000Z, last due 2026-01-01T06:00:00.000Z\)\]\n\nreport$/,
        );
        assert.deepEqual(
          runs.map((r) => [r.kind, r.status, r.missed, r.dueAt]),
          [
            ['catch-up', 'posted', 5, T0 + 6 * H],
            ['scheduled', 'posted', 0, T0 + H],
          ],
        );
      }
      // Then the normal cadence: 07:00, once.
      assert.equal((await up.store.resolve(task.id))?.nextRunAt, T0 + 7 * H);
      await advance(up, 30 * MIN);
      assert.equal(engine.runs.length, policy === 'skip' ? 2 : 3);
      assert.equal(engine.runs.at(-1)?.messageId, `cron-${task.id}-${T0 + 7 * H}`);
      await up.scheduler.stop();

      // A further restart with nothing missed does nothing at once.
      const calm = await boot(T0 + 7 * H + 10 * MIN, { 'scheduler.missedRuns': policy });
      await calm.scheduler.start();
      assert.equal(engine.runs.length, policy === 'skip' ? 2 : 3);
      await calm.scheduler.stop();
    });

    it(`with missedRuns = ${policy}, a crash between the post and its record gives exactly one run`, async () => {
      for (const hold of ['after-accept', 'before-accept'] as const) {
        engine = new RecordingEngine();
        const d = await boot(T0, { 'scheduler.missedRuns': policy });
        await d.scheduler.start();
        const task = await d.scheduler.add({ name: `t-${hold}`, schedule: '0 * * * *', prompt: 'p' });
        engine.hold = hold;
        await d.clock.advance(1 * H); // fires; the post never returns: the daemon "dies" here
        assert.equal((await d.store.runs(task.id, 1))[0]?.status, 'posting');
        assert.equal(engine.posts.length, hold === 'after-accept' ? 1 : 0);

        engine.hold = 'none';
        const up = await boot(T0 + H + 5 * MIN, { 'scheduler.missedRuns': policy });
        await up.scheduler.start();
        assert.equal(engine.runs.length, 1, `${hold}: exactly one run`);
        assert.equal(engine.runs[0]?.messageId, `cron-${task.id}-${T0 + H}`);
        const run = (await up.store.runs(task.id, 1))[0];
        assert.equal(run?.status, 'posted');
        assert.equal(run?.duplicate, hold === 'after-accept');
        assert.equal(run?.attempts, 2);
        await up.scheduler.stop();

        const later = await boot(T0 + H + 10 * MIN, { 'scheduler.missedRuns': policy });
        await later.scheduler.start();
        assert.equal(engine.posts.length, hold === 'after-accept' ? 2 : 1, 'no further post on a later restart');
        await later.scheduler.stop();
        for (const daemon of daemons.splice(0)) await daemon.db.close();
        dir.remove();
        dir = tempDir();
      }
    });
  }

  for (const policy of ['skip', 'run-once'] as const) {
    it(`when the timer wakes late across several due times, makes one run (missedRuns = ${policy})`, async () => {
      const d = await boot(T0, { 'scheduler.missedRuns': policy }, 2 * H);
      await d.scheduler.start();
      const task = await d.scheduler.add({ name: 'hourly', schedule: '0 * * * *', prompt: 'p' });
      await advance(d, 2 * H + MIN);
      assert.equal(engine.runs.length, 1);
      assert.equal(engine.runs[0]?.messageId, `cron-${task.id}-${T0 + 2 * H}`);
      const runs = (await d.store.runs(task.id, 5)).map((r) => [r.kind, r.status, r.missed, r.dueAt]);
      assert.deepEqual(
        runs,
        policy === 'skip'
          ? [
              ['scheduled', 'posted', 0, T0 + 2 * H],
              ['missed', 'skipped', 1, T0 + H],
            ]
          : [['catch-up', 'posted', 1, T0 + 2 * H]],
      );
      assert.equal((await d.store.resolve(task.id))?.nextRunAt, T0 + 3 * H);
      await d.scheduler.stop();
    });
  }

  it('abandons a run cut off by a crash twice instead of looping', async () => {
    const d = await boot(T0);
    await d.scheduler.start();
    const task = await d.scheduler.add({ name: 'poison', schedule: '0 * * * *', prompt: 'p' });
    engine.hold = 'before-accept';
    await d.clock.advance(H);
    const retry = await boot(T0 + H + MIN);
    void retry.scheduler.start(); // the re-post hangs too: the daemon dies again
    await waitFor('the re-post to be recorded', async () => (await retry.store.runs(task.id, 1))[0]?.attempts === 2);

    engine.hold = 'none';
    const third = await boot(T0 + H + 2 * MIN);
    await third.scheduler.start();
    assert.equal(engine.posts.length, 0);
    const run = (await third.store.runs(task.id, 1))[0];
    assert.equal(run?.status, 'abandoned');
    assert.match(run?.error ?? '', /stopped 2 times while posting/);
    assert.equal(third.log.find('error', /abandoned/).length, 1);
    // The task keeps its cadence.
    await advance(third, 58 * MIN);
    assert.deepEqual(
      engine.runs.map((p) => p.messageId),
      [`cron-${task.id}-${T0 + 2 * H}`],
    );
    await third.scheduler.stop();
  });

  it('records a run the engine refuses as failed, and keeps the cadence', async () => {
    const d = await boot(T0);
    await d.scheduler.start();
    const task = await d.scheduler.add({ name: 'x', schedule: '0 * * * *', prompt: 'p' });
    engine.failWith = new Error('disk full');
    await advance(d, H);
    assert.deepEqual(
      (await d.store.runs(task.id, 1)).map((r) => [r.status, r.error]),
      [['failed', 'disk full']],
    );
    assert.equal(d.log.find('error', /could not be posted/).length, 1);
    engine.failWith = null;
    await advance(d, H);
    assert.equal(engine.runs.length, 1);
    await d.scheduler.stop();
  });

  it('a run the engine accepted but the store could not record stays unfinished; the next start records it once', async () => {
    const d = await boot(T0);
    await d.scheduler.start();
    const task = await d.scheduler.add({ name: 'flaky-disk', schedule: '0 * * * *', prompt: 'p' });
    d.store.finishRun = () => {
      throw new Error('disk I/O error');
    };
    await advance(d, H);
    assert.equal(engine.runs.length, 1);
    assert.equal((await d.store.runs(task.id, 1))[0]?.status, 'posting', 'not recorded as failed: the engine has it');
    assert.equal(d.log.find('error', /could not be recorded/).length, 1);
    assert.equal(d.log.find('error', /could not be posted/).length, 0);
    await d.scheduler.stop();

    const up = await boot(T0 + H + MIN);
    await up.scheduler.start();
    const run = (await up.store.runs(task.id, 1))[0];
    assert.deepEqual([run?.status, run?.duplicate, run?.attempts], ['posted', true, 2]);
    assert.equal(engine.runs.length, 1, 'the engine ran it once');
    await up.scheduler.stop();
  });

  it('does not fire disabled tasks, and enabling does not catch up the time it was off', async () => {
    const d = await boot(T0);
    await d.scheduler.start();
    const task = await d.scheduler.add({ name: 'off', schedule: '0 * * * *', prompt: 'p', enabled: false });
    assert.equal(task.nextRunAt, null);
    await advance(d, 3 * H + 30 * MIN);
    assert.equal(engine.posts.length, 0);
    assert.equal((await d.scheduler.setEnabled('off', true)).nextRunAt, T0 + 4 * H);
    await advance(d, 30 * MIN);
    assert.equal(engine.runs.length, 1);
    await d.scheduler.setEnabled(task.id, false);
    await advance(d, 2 * H);
    assert.equal(engine.runs.length, 1);
    assert.equal((await d.scheduler.remove('off')).id, task.id);
    await assert.rejects(d.scheduler.remove('off'), /no cron task "off"/);
    await d.scheduler.stop();
  });
});

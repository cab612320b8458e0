import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import { RecordingEngine } from '../../../test/support/recording-engine.ts';
import { SteppingClock } from '../../../test/support/stepping-clock.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import type { TestStore } from '../../../test/support/test-store.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { loadConfig } from '../../core/config-load.ts';
import { AppError } from '../../core/errors.ts';
import { HeartbeatStore } from '../../store/heartbeat-store.ts';
import { Heartbeat } from './heartbeat.ts';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const MIN = 60_000;

interface Daemon {
  clock: SteppingClock;
  db: TestStore;
  store: HeartbeatStore;
  heartbeat: Heartbeat;
  log: ReturnType<typeof captureLogger>;
}

describe('Heartbeat', () => {
  let dir: { path: string; remove: () => void };
  let engine: RecordingEngine;
  let daemons: Daemon[];

  async function boot(at: number, overrides: Record<string, unknown> = {}): Promise<Daemon> {
    const { config } = loadConfig({ home: dir.path, env: {}, overrides });
    const posts = engine;
    let heartbeat: Heartbeat | undefined = undefined;
    // Each timer's work settles before time moves on: the heartbeat is idle (its store writes committed), or its post
    // hangs as the test asked (a daemon "dying" there). Over PostgreSQL's pool that takes more than a macrotask.
    const clock = new SteppingClock(at, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.race([heartbeat?.idle(), posts.whenHeld()]);
    });
    const db = await openTestStore(join(dir.path, 'state.db'));
    const store = new HeartbeatStore(db.db);
    const log = captureLogger();
    heartbeat = new Heartbeat({ store, engine, clock, logger: log.logger, config });
    const d = { clock, db, store, heartbeat, log };
    daemons.push(d);
    return d;
  }

  async function advance(d: Daemon, ms: number): Promise<void> {
    await d.clock.advance(ms);
    await d.heartbeat.idle();
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

  it('sends every task as one batch prompt to the heartbeat session on the interval', async () => {
    const d = await boot(T0);
    await d.heartbeat.start();
    const ci = await d.heartbeat.addTask({ title: 'Check CI', prompt: 'Look at the failing builds.' });
    // Batch order is the creation time: tasks made in the same millisecond are listed by id.
    await d.clock.advance(1);
    await d.heartbeat.addTask({ title: 'Inbox', prompt: 'Summarize new issues.' });
    await assert.rejects(d.heartbeat.addTask({ title: 'Inbox', prompt: 'x' }), /already exists/);
    await assert.rejects(
      d.heartbeat.addTask({ title: ' ', prompt: 'x' }),
      (e: unknown) => e instanceof AppError && e.field === 'title',
    );
    await advance(d, 29 * MIN);
    assert.equal(engine.posts.length, 0);
    await advance(d, 1 * MIN);
    assert.equal(engine.posts.length, 1);
    const post = engine.posts[0];
    assert.deepEqual(post?.descriptor, { type: 'heartbeat' });
    assert.equal(post?.origin, 'heartbeat');
    assert.match(post?.text ?? '', /^# Heartbeat run — 2026-01-01T00:30:00.000Z \(timer\)/);
    assert.match(
      post?.text ?? '',
      new RegExp(
        `### 1\\. Check CI\\nid: ${ci.id}\\n\\nLook at the failing builds\\.\\n\\n### 2\\. Inbox\\nid: .+\\n\\nSummarize new issues\\.`,
      ),
    );
    assert.equal((await d.heartbeat.status()).lastRunAt, T0 + 30 * MIN);
    await advance(d, 30 * MIN);
    assert.equal(engine.runs.length, 2);
    await d.heartbeat.stop();
  });

  it('does nothing on a timer tick with no tasks and nothing queued (logged at debug)', async () => {
    const d = await boot(T0);
    await d.heartbeat.start();
    await advance(d, 95 * MIN);
    assert.equal(engine.posts.length, 0);
    assert.equal(d.log.find('debug', /no tasks and no queued events/).length, 3);
    assert.equal(await d.heartbeat.nextRunAt(), T0 + 120 * MIN);
    await d.heartbeat.stop();
  });

  it('runs on an explicit wake even with an empty task list (#14527), with the wake text in the prompt', async () => {
    const d = await boot(T0);
    await d.heartbeat.start();
    const manual = await d.heartbeat.runNow('manual');
    assert.equal(manual.tasks, 0);
    assert.match(
      engine.posts[0]?.text ?? '',
      /\(manual\)\n\nThis run was requested explicitly; there are no heartbeat tasks and no queued events\./,
    );
    await d.heartbeat.runNow('wake', [{ text: 'Coding session "fix" completed.', source: 'wake', at: T0 }]);
    assert.equal(engine.runs.length, 2);
    assert.match(
      engine.posts[1]?.text ?? '',
      /There are no heartbeat tasks; only the events below\.[\s\S]*### Event 1 \(wake, 2026-01-01T00:00:00.000Z\)\n\nCoding session "fix" completed\./,
    );
    // An explicit run moves the cadence: the next timer run is a full interval later.
    assert.equal(await d.heartbeat.nextRunAt(), T0 + 30 * MIN);
    await d.heartbeat.stop();
  });

  it('puts queued events into exactly one run, which happens even with no tasks', async () => {
    const d = await boot(T0);
    await d.heartbeat.start();
    await advance(d, 10 * MIN);
    const { nextRunAt } = await d.heartbeat.queueEvent('deploy finished', 'hook');
    assert.equal(nextRunAt, T0 + 30 * MIN);
    await d.heartbeat.queueEvent('backup failed', 'hook');
    await advance(d, 20 * MIN);
    assert.equal(engine.runs.length, 1);
    const text = engine.runs[0]?.text ?? '';
    assert.match(
      text,
      /### Event 1 \(hook, 2026-01-01T00:10:00.000Z\)\n\ndeploy finished\n\n### Event 2 \(hook, .+\)\n\nbackup failed/,
    );
    assert.equal((await d.heartbeat.status()).pendingEvents, 0);
    await d.heartbeat.addTask({ title: 'T', prompt: 'p' });
    await advance(d, 30 * MIN);
    assert.equal(engine.runs.length, 2);
    assert.doesNotMatch(engine.runs[1]?.text ?? '', /deploy finished|## Events/);
    await d.heartbeat.stop();
  });

  it('keeps its cadence across restarts: no run at start unless one is due', async () => {
    const d = await boot(T0);
    await d.heartbeat.start();
    await d.heartbeat.addTask({ title: 'T', prompt: 'p' });
    await advance(d, 30 * MIN);
    assert.equal(engine.runs.length, 1);
    await advance(d, 10 * MIN);
    await d.heartbeat.stop();

    const early = await boot(T0 + 50 * MIN);
    await early.heartbeat.start();
    assert.equal(engine.runs.length, 1, 'no run at start');
    assert.equal((await early.heartbeat.status()).lastRunAt, T0 + 30 * MIN);
    await advance(early, 9 * MIN);
    assert.equal(engine.runs.length, 1);
    await advance(early, 1 * MIN);
    assert.equal(engine.runs.length, 2, 'the run due at 01:00');
    await early.heartbeat.stop();

    // Down past a due time: one run at start, then the interval from there.
    const late = await boot(T0 + 180 * MIN);
    await late.heartbeat.start();
    await late.heartbeat.idle();
    await late.clock.advance(0);
    await late.heartbeat.idle();
    assert.equal(engine.runs.length, 3);
    assert.equal(await late.heartbeat.nextRunAt(), T0 + 210 * MIN);
    await late.heartbeat.stop();
  });

  it('with the timer off (intervalMinutes 0), refuses next-heartbeat events but still runs on request', async () => {
    const d = await boot(T0, { 'heartbeat.intervalMinutes': 0 });
    await d.heartbeat.start();
    await d.heartbeat.addTask({ title: 'T', prompt: 'p' });
    await advance(d, 300 * MIN);
    assert.equal(engine.posts.length, 0);
    assert.equal(await d.heartbeat.nextRunAt(), null);
    await assert.rejects(d.heartbeat.queueEvent('x', 'hook'), /timer is off .*mode "now"/);
    await d.heartbeat.runNow('manual');
    assert.equal(engine.runs.length, 1);
    await d.heartbeat.stop();
  });

  it('re-posts a run cut off by a crash once, with the same message id and the same events', async () => {
    const d = await boot(T0);
    await d.heartbeat.start();
    await d.heartbeat.queueEvent('one event', 'hook');
    engine.hold = 'after-accept';
    await d.clock.advance(30 * MIN); // the post is held: the daemon "dies" there
    assert.equal(engine.posts.length, 1);

    engine.hold = 'none';
    const up = await boot(T0 + 31 * MIN);
    await up.heartbeat.start();
    assert.equal(engine.runs.length, 1, 'exactly one run');
    assert.equal(engine.posts.length, 2);
    assert.equal(engine.posts[1]?.duplicate, true);
    assert.equal(engine.posts[1]?.messageId, engine.posts[0]?.messageId);
    assert.equal((await up.store.runs(1))[0]?.status, 'posted');
    assert.equal((await up.heartbeat.status()).pendingEvents, 0);
    await up.heartbeat.stop();
  });

  it('gives the events of a run the engine refused to the next run', async () => {
    const d = await boot(T0);
    await d.heartbeat.start();
    await d.heartbeat.queueEvent('keep me', 'hook');
    engine.failWith = new Error('engine stopping');
    await advance(d, 30 * MIN);
    assert.equal((await d.store.runs(1))[0]?.status, 'failed');
    assert.equal((await d.heartbeat.status()).pendingEvents, 1);
    assert.equal(d.log.find('error', /could not be posted/).length, 1);
    await assert.rejects(d.heartbeat.runNow('manual'), /engine stopping/);
    engine.failWith = null;
    await advance(d, 30 * MIN);
    assert.equal(engine.runs.length, 1);
    assert.match(engine.runs[0]?.text ?? '', /keep me/);
    await d.heartbeat.stop();
  });
});

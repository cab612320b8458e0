import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import { CRON_T0 as T0, cronTask } from '../../../test/support/cron-task.ts';
import { RecordingEngine } from '../../../test/support/recording-engine.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import type { TestStore } from '../../../test/support/test-store.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { ManualClock } from '../../core/clock.ts';
import type { CronTask } from '../../store/cron-tasks.ts';
import { CronTaskStore } from '../../store/cron-tasks.ts';
import { CronRuns } from './cron-runs.ts';

const H = 3_600_000;
const TASK: CronTask = cronTask({ prompt: 'check the build' });

describe('CronRuns', () => {
  let dir: { path: string; remove: () => void };
  let db: TestStore;
  let store: CronTaskStore;
  let engine: RecordingEngine;
  let clock: ManualClock;

  /** One daemon lifetime's runs over the shared store and engine. */
  function runs(log = captureLogger()): CronRuns {
    return new CronRuns({ store, engine, clock, logger: log.logger, config: { scheduler: { keepRuns: 10 } } });
  }

  beforeEach(async () => {
    dir = tempDir();
    db = await openTestStore(join(dir.path, 'state.db'));
    store = new CronTaskStore(db.db);
    engine = new RecordingEngine();
    clock = new ManualClock(T0 + H);
    await store.insert(TASK);
  });
  afterEach(async () => {
    await db.close();
    dir.remove();
  });

  it('claims a due time once: posts it, records the outcome; a second begin for it only moves the task on', async () => {
    const log = captureLogger();
    const cron = runs(log);
    await cron.begin(TASK, T0 + H, 'scheduled', null, T0 + 2 * H);
    await cron.posting;
    assert.deepEqual(
      engine.runs.map((p) => [p.messageId, p.origin, p.sessionId]),
      [[`cron-t1-${T0 + H}`, 'cron:nightly', 'cron-t1']],
    );
    assert.match(engine.runs[0]?.text ?? '', /run due 2026-01-01T01:00:00.000Z\]\n\ncheck the build$/);
    assert.deepEqual(
      (await store.runs('t1', 5)).map((r) => [r.kind, r.status, r.sessionId, r.duplicate]),
      [['scheduled', 'posted', 'cron-t1', false]],
    );
    assert.equal(log.find('info', /^cron run posted$/).length, 1);
    assert.deepEqual(
      [(await store.resolve('t1'))?.lastDueAt, (await store.resolve('t1'))?.nextRunAt],
      [T0 + H, T0 + 2 * H],
    );

    await cron.begin(TASK, T0 + H, 'scheduled', null, T0 + 3 * H);
    await cron.posting;
    assert.equal(engine.posts.length, 1);
    assert.equal((await store.runs('t1', 5)).length, 1);
    assert.equal((await store.resolve('t1'))?.nextRunAt, T0 + 3 * H);
    assert.equal(log.find('debug', /already handled; not fired again/).length, 1);
  });

  it('posts a run a crash left unrecorded again under its message id, once; the engine knows it as a duplicate', async () => {
    engine.hold = 'after-accept';
    await runs().begin(TASK, T0 + H, 'scheduled', null, T0 + 2 * H);
    await engine.whenHeld();
    assert.equal((await store.runs('t1', 1))[0]?.status, 'posting');

    engine.hold = 'none';
    const log = captureLogger();
    const restarted = runs(log);
    await restarted.recover();
    await restarted.posting;
    assert.deepEqual(
      engine.posts.map((p) => [p.messageId, p.duplicate]),
      [
        [`cron-t1-${T0 + H}`, false],
        [`cron-t1-${T0 + H}`, true],
      ],
    );
    assert.deepEqual(
      (await store.runs('t1', 5)).map((r) => [r.status, r.attempts, r.duplicate]),
      [['posted', 2, true]],
    );
    assert.equal(log.find('warn', /not recorded before the daemon stopped/).length, 1);
    assert.equal(log.find('info', /already accepted before the restart; recorded/).length, 1);

    // Recorded: a further start has nothing to post.
    await runs().recover();
    assert.equal(engine.posts.length, 2);
  });
});

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import { linearRouterSchema } from '../core/config-linear-agents.ts';
import { AppError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import type { LinearJob } from '../store/linear-jobs.ts';
import { LinearJobStore } from '../store/linear-jobs.ts';
import type { Database } from '../store/tables/index.ts';
import { LinearApiError } from './api/types.ts';
import type { JobKind } from './jobs.ts';
import { JobRunner } from './jobs.ts';

const config = linearRouterSchema.parse({ concurrency: 2, maxAttempts: 3, retryInitialSec: 10 });

function runner(db: Kysely<Database>, clock: ManualClock, kinds: Record<string, JobKind>): JobRunner {
  return new JobRunner({ store: new LinearJobStore(db), kinds, clock, logger: silentLogger(), config });
}

describe('JobRunner', () => {
  // Times out (rather than failing `most`) if the two keys never run at once: a1 and b1 wait for each other.
  it(
    'runs jobs of one serial key one at a time and in order, other keys alongside; a key is queued once',
    { timeout: 10_000 },
    async () => {
      const clock = new ManualClock();
      const db = (await openTestStore(':memory:')).db;
      const order: string[] = [];
      let running = 0;
      let most = 0;
      const startedKeys = new Set<string>();
      const { promise: bothKeysRunning, resolve: bothKeysStarted } = Promise.withResolvers<void>();
      const r = runner(db, clock, {
        work: {
          run: async (job) => {
            running += 1;
            most = Math.max(most, running);
            startedKeys.add(job.serialKey);
            if (startedKeys.size === 2) bothKeysStarted();
            await bothKeysRunning;
            order.push(job.key);
            running -= 1;
          },
          giveUp: async () => undefined,
        },
      });
      await r.start();
      for (const key of ['a1', 'a2', 'a3']) await r.enqueue({ key, kind: 'work', serialKey: 'a', payload: {} });
      await r.enqueue({ key: 'b1', kind: 'work', serialKey: 'b', payload: {} });
      assert.equal((await r.enqueue({ key: 'a1', kind: 'work', serialKey: 'a', payload: {} })).created, false);
      await r.idle();
      assert.deepEqual(
        order.filter((k) => k.startsWith('a')),
        ['a1', 'a2', 'a3'],
      );
      assert.ok(order.includes('b1'));
      assert.equal(most, 2, 'two keys ran at once');
      assert.deepEqual(
        (await new LinearJobStore(db).list()).map((j) => j.status),
        ['done', 'done', 'done', 'done'],
      );
    },
  );

  it('retries failures that may pass with backoff, then gives up and says so; never retries what cannot pass', async () => {
    const clock = new ManualClock();
    const db = (await openTestStore(':memory:')).db;
    const attempts: number[] = [];
    const gaveUp: { key: string; error: string }[] = [];
    const r = runner(db, clock, {
      flaky: {
        run: async (job) => {
          attempts.push(job.attempts);
          throw new LinearApiError('network', 'socket hang up');
        },
        giveUp: async (job, error) => void gaveUp.push({ key: job.key, error }),
      },
      broken: {
        run: async () => {
          throw new AppError('unavailable', 'the agent engine is not running');
        },
        giveUp: async (job, error) => void gaveUp.push({ key: job.key, error }),
      },
    });
    await r.start();
    await r.enqueue({ key: 'f', kind: 'flaky', serialKey: 'f', payload: {} });
    await r.enqueue({ key: 'x', kind: 'broken', serialKey: 'x', payload: {} });
    await r.idle();
    assert.deepEqual(attempts, [1]);
    assert.deepEqual(gaveUp, [{ key: 'x', error: 'the agent engine is not running' }]);
    clock.advance(9_999);
    await r.idle();
    assert.deepEqual(attempts, [1], 'not before the backoff');
    clock.advance(1);
    await r.idle();
    assert.deepEqual(attempts, [1, 2]);
    clock.advance(20_000);
    await r.idle();
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.deepEqual(
      gaveUp.map((g) => g.key),
      ['x', 'f'],
    );
    assert.equal((await new LinearJobStore(db).get('f'))?.status, 'failed');
  });

  it('runs again after a restart what the last process left running, and a stop cancels a session’s jobs', async () => {
    const dir = tempDir('sb-jobs-');
    const path = join(dir.path, 'state.db');
    const clock = new ManualClock();
    const db = await openTestStore(path);
    const store = new LinearJobStore(db.db);
    await store.enqueue(
      { key: 'cut', kind: 'work', serialKey: 's', agentSessionId: 'as-1', payload: { n: 1 } },
      clock.now(),
    );
    assert.equal((await store.claimDue(clock.now(), 5)).length, 1, 'running when the process died');
    await db.close();
    const opened = await openTestStore(path);
    const db2 = opened.db;
    const seen: LinearJob[] = [];
    let release: () => void = () => undefined;
    const r = runner(db2, clock, {
      work: {
        run: (job, signal) => {
          seen.push(job);
          return new Promise<void>((resolve, reject) => {
            release = resolve;
            signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          });
        },
        giveUp: async () => undefined,
      },
    });
    await r.start();
    await waitFor('the job left running to run again', () => seen.length > 0);
    assert.deepEqual(
      seen.map((j) => [j.key, j.attempts, j.payload]),
      [['cut', 2, { n: 1 }]],
    );
    const cancelled = await r.cancelForSession('as-1');
    assert.deepEqual(
      cancelled.map((j) => j.key),
      ['cut'],
    );
    await r.idle();
    assert.equal((await new LinearJobStore(db2).get('cut'))?.status, 'cancelled');
    release();
    await r.stop();
    await opened.close();
    dir.remove();
  });
});

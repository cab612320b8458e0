// Cron tasks and runs on both databases: a due time is claimed once, the last due time never goes back, history is
// trimmed per task, and a task resolves by id before name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import type { CronTask } from './cron-tasks.ts';
import { CronTaskStore } from './cron-tasks.ts';

function task(id: string, name: string, createdAt: number): CronTask {
  return {
    id,
    name,
    schedule: '0 * * * *',
    timezone: null,
    prompt: 'p',
    enabled: true,
    createdAt,
    updatedAt: createdAt,
    lastRunAt: null,
    lastDueAt: null,
    nextRunAt: 1_000,
  };
}

const begin = (dueAt: number, extra: { messageId?: string; nextRunAt?: number | null } = {}) => ({
  taskId: 't1',
  dueAt,
  kind: 'scheduled' as const,
  missed: 0,
  firstMissedAt: null,
  prompt: `run ${dueAt}`,
  messageId: extra.messageId ?? `cron-t1-${dueAt}`,
  now: dueAt,
  nextRunAt: extra.nextRunAt ?? dueAt + 1_000,
});

describeEachDatabase('CronTaskStore', (fresh) => {
  test('stores, lists oldest first (then by id), resolves by id before name, enables and deletes', async () => {
    const store = new CronTaskStore((await fresh()).db);
    await store.insert(task('t2', 'beta', 5));
    await store.insert(task('t1', 'alpha', 5));
    await store.insert(task('t0', 't1', 9));
    await assert.rejects(store.insert(task('t3', 'alpha', 10)));
    assert.deepEqual(
      (await store.list()).map((t) => t.id),
      ['t1', 't2', 't0'],
    );
    assert.deepEqual(await store.resolve('t1'), task('t1', 'alpha', 5), 'the id wins over a name');
    assert.equal((await store.resolve('beta'))?.id, 't2');
    assert.equal(await store.resolve('nope'), undefined);
    await store.setEnabled('t1', false, null, 50);
    assert.deepEqual(
      [
        (await store.resolve('t1'))?.enabled,
        (await store.resolve('t1'))?.nextRunAt,
        (await store.resolve('t1'))?.updatedAt,
      ],
      [false, null, 50],
    );
    await store.setNextRun('t2', 7_000);
    assert.equal((await store.resolve('t2'))?.nextRunAt, 7_000);
    assert.equal(await store.delete('t2'), true);
    assert.equal(await store.delete('t2'), false);
  });

  test('claims a due time once, moves the task on, and records the outcome', async () => {
    const store = new CronTaskStore((await fresh()).db);
    await store.insert(task('t1', 'alpha', 0));
    const run = await store.beginRun(begin(1_000));
    assert.deepEqual([run?.status, run?.attempts, run?.kind, run?.duplicate], ['posting', 1, 'scheduled', false]);
    assert.equal(await store.beginRun(begin(1_000, { messageId: 'other' })), null, 'a due time already claimed');
    assert.equal(await store.beginRun(begin(500)), null, 'a due time the task has passed');
    assert.equal(await store.beginRun({ ...begin(2_000), taskId: 'gone' }), null, 'no such task');
    assert.deepEqual([(await store.resolve('t1'))?.lastDueAt, (await store.resolve('t1'))?.nextRunAt], [1_000, 2_000]);
    assert.deepEqual(
      (await store.unfinishedRuns()).map((r) => r.id),
      [run?.id],
    );

    await store.retryRun(run?.id ?? -1);
    await store.finishRun(
      { ...(run ?? assert.fail()), attempts: 2 },
      { sessionId: 's-1', duplicate: true, now: 1_100 },
      10,
    );
    const done = await store.run(run?.id ?? -1);
    assert.deepEqual(
      [done?.status, done?.attempts, done?.sessionId, done?.duplicate, done?.finishedAt],
      ['posted', 2, 's-1', true, 1_100],
    );
    assert.equal((await store.resolve('t1'))?.lastRunAt, 1_100);
    assert.deepEqual(await store.unfinishedRuns(), []);

    const refused = await store.beginRun(begin(2_000));
    await store.failRun(refused ?? assert.fail(), 'failed', 'disk full', 2_100, 10);
    assert.deepEqual(
      (await store.runs('t1')).map((r) => [r.dueAt, r.status, r.error]),
      [
        [2_000, 'failed', 'disk full'],
        [1_000, 'posted', null],
      ],
    );
  });

  test('records skipped missed runs in one row; the last due time never goes back; history is trimmed per task', async () => {
    const store = new CronTaskStore((await fresh()).db);
    await store.insert(task('t1', 'alpha', 0));
    await store.insert(task('t2', 'beta', 0));
    await store.recordMissed(
      {
        taskId: 't1',
        firstDueAt: 1_000,
        lastDueAt: 5_000,
        count: 5,
        messageId: 'cron-t1-5000-missed',
        now: 5_500,
        nextRunAt: 6_000,
      },
      10,
    );
    const [missed] = await store.runs('t1');
    assert.deepEqual(
      [missed?.kind, missed?.status, missed?.missed, missed?.firstMissedAt, missed?.dueAt, missed?.attempts],
      ['missed', 'skipped', 5, 1_000, 5_000, 0],
    );
    // An older window recorded late moves the next due time but not the last due time back.
    await store.recordMissed(
      {
        taskId: 't1',
        firstDueAt: 100,
        lastDueAt: 200,
        count: 1,
        messageId: 'cron-t1-200-missed',
        now: 5_600,
        nextRunAt: 7_000,
      },
      10,
    );
    assert.deepEqual([(await store.resolve('t1'))?.lastDueAt, (await store.resolve('t1'))?.nextRunAt], [5_000, 7_000]);

    for (const dueAt of [6_000, 7_000, 8_000]) {
      const run = await store.beginRun(begin(dueAt));
      await store.finishRun(run ?? assert.fail(), { sessionId: 's', duplicate: false, now: dueAt }, 3);
    }
    await store.recordMissed(
      {
        taskId: 't2',
        firstDueAt: 1_000,
        lastDueAt: 1_000,
        count: 1,
        messageId: 'cron-t2-1000-missed',
        now: 1_000,
        nextRunAt: null,
      },
      3,
    );
    assert.deepEqual(
      (await store.runs('t1', 20)).map((r) => [r.dueAt, r.status]),
      [
        [8_000, 'posted'],
        [7_000, 'posted'],
        [6_000, 'posted'],
      ],
      'trimmed to the newest 3',
    );
    const posting = await store.beginRun(begin(9_000));
    const later = await store.beginRun(begin(10_000));
    // Recording the later run with 1 kept: the earlier one, still posting, stays.
    await store.finishRun(later ?? assert.fail(), { sessionId: 's', duplicate: false, now: 10_000 }, 1);
    assert.deepEqual(
      (await store.runs('t1', 20)).map((r) => [r.dueAt, r.status]),
      [
        [10_000, 'posted'],
        [9_000, 'posting'],
      ],
      'a run still posting is never trimmed',
    );
    assert.equal(posting?.status, 'posting');
    assert.equal((await store.runs('t2')).length, 1, 'other tasks keep theirs');
  });
});

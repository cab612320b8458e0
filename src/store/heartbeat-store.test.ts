// The heartbeat store on both databases: tasks in creation order (then by id), the cadence row made once, events
// claimed by exactly one run (and given back when the engine refused it), finished runs trimmed, and an event queued in
// a caller's transaction committing or rolling back with it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import type { HeartbeatTask } from './heartbeat-store.ts';
import { HeartbeatStore } from './heartbeat-store.ts';

function task(id: string, title: string, createdAt: number): HeartbeatTask {
  return { id, title, prompt: `check ${title}`, createdAt, updatedAt: createdAt };
}

const begin = (messageId: string, now: number) => ({
  messageId,
  reason: 'timer',
  now,
  build: (tasks: HeartbeatTask[], events: { text: string }[]) =>
    `${tasks.map((t) => t.title).join(',')}|${events.map((e) => e.text).join(',')}`,
});

describeEachDatabase('HeartbeatStore', (fresh) => {
  test('stores tasks, lists them oldest first (then by id), resolves by id before title, deletes', async () => {
    const store = new HeartbeatStore((await fresh()).db);
    await store.insertTask(task('t2', 'beta', 5));
    await store.insertTask(task('t1', 'alpha', 5));
    await store.insertTask(task('t0', 't1', 9));
    await assert.rejects(store.insertTask(task('t3', 'alpha', 10)), 'titles are unique');
    assert.deepEqual(
      (await store.listTasks()).map((t) => t.id),
      ['t1', 't2', 't0'],
    );
    assert.deepEqual(await store.resolveTask('t1'), task('t1', 'alpha', 5), 'the id wins over a title');
    assert.equal((await store.resolveTask('beta'))?.id, 't2');
    assert.equal(await store.resolveTask('nope'), undefined);
    assert.equal(await store.deleteTask('t2'), true);
    assert.equal(await store.deleteTask('t2'), false);
    assert.deepEqual(
      (await store.listTasks()).map((t) => t.id),
      ['t1', 't0'],
    );
  });

  test('makes the cadence row on first use only; the anchor moves with setAnchor and runs', async () => {
    const { db } = await fresh();
    const store = new HeartbeatStore(db);
    assert.equal(await db.selectFrom('heartbeat_state').select('id').executeTakeFirst(), undefined);
    assert.deepEqual(await store.state(100), { anchorAt: 100, lastRunAt: null, lastReason: null });
    assert.deepEqual(
      await store.state(200),
      { anchorAt: 100, lastRunAt: null, lastReason: null },
      'a later read finds the first anchor',
    );
    await store.setAnchor(300);
    assert.equal((await store.state(400)).anchorAt, 300);
    const run = await store.beginRun({ ...begin('m1', 500), reason: 'manual' });
    await store.finishRun(run.id, { sessionId: 'hb', duplicate: false, now: 510 }, 10);
    assert.deepEqual(await store.state(600), { anchorAt: 500, lastRunAt: 510, lastReason: 'manual' });
  });

  test('a run claims the waiting events once; a refused run gives them back, an abandoned one keeps them', async () => {
    const store = new HeartbeatStore((await fresh()).db);
    await store.insertTask(task('t1', 'alpha', 1));
    const { event: first, state } = await store.addEvent('deploy finished', 'hook', 10);
    assert.deepEqual(first, { id: first.id, text: 'deploy finished', source: 'hook', createdAt: 10, runId: null });
    assert.equal(state.anchorAt, 10, 'the cadence is made by the first event when missing');
    await store.addEvent('backup failed', 'hook', 11);
    assert.deepEqual(
      (await store.pendingEvents()).map((e) => e.text),
      ['deploy finished', 'backup failed'],
    );

    const run = await store.beginRun(begin('m1', 20));
    assert.deepEqual(
      [run.status, run.attempts, run.tasks, run.events, run.prompt, run.messageId, run.duplicate, run.sessionId],
      ['posting', 1, 1, 2, 'alpha|deploy finished,backup failed', 'm1', false, null],
    );
    assert.deepEqual(await store.pendingEvents(), []);
    assert.deepEqual(
      (await store.eventsOf(run.id)).map((e) => [e.text, e.runId]),
      [
        ['deploy finished', run.id],
        ['backup failed', run.id],
      ],
    );
    assert.deepEqual(
      (await store.unfinishedRuns()).map((r) => r.id),
      [run.id],
    );
    await store.failRun(run.id, 'failed', 'engine stopping', 30);
    assert.deepEqual(
      [(await store.run(run.id))?.status, (await store.run(run.id))?.error, (await store.run(run.id))?.finishedAt],
      ['failed', 'engine stopping', 30],
    );
    assert.equal((await store.pendingEvents()).length, 2, 'given back to the next run');

    const again = await store.beginRun(begin('m2', 40));
    assert.equal(again.events, 2);
    await store.retryRun(again.id);
    assert.equal((await store.run(again.id))?.attempts, 2);
    await store.failRun(again.id, 'abandoned', 'crashed twice', 50);
    assert.deepEqual(await store.pendingEvents(), [], 'an abandoned run keeps its events');
    assert.deepEqual(await store.unfinishedRuns(), []);
  });

  test('finishing a run records it and keeps the newest finished runs; runs still posting are never trimmed', async () => {
    const store = new HeartbeatStore((await fresh()).db);
    const stuck = await store.beginRun(begin('stuck', 1));
    for (let i = 0; i < 4; i++) {
      const run = await store.beginRun(begin(`m${i}`, 10 + i));
      await store.finishRun(run.id, { sessionId: 'hb', duplicate: i === 3, now: 20 + i }, 2);
    }
    const runs = await store.runs();
    assert.deepEqual(
      runs.map((r) => r.messageId),
      ['m3', 'm2', 'stuck'],
    );
    assert.deepEqual(
      [runs[0]?.status, runs[0]?.sessionId, runs[0]?.duplicate, runs[0]?.finishedAt, runs[0]?.error],
      ['posted', 'hb', true, 23, null],
    );
    assert.deepEqual(
      (await store.runs(1)).map((r) => r.messageId),
      ['m3'],
    );
    assert.deepEqual(
      (await store.unfinishedRuns()).map((r) => r.id),
      [stuck.id],
    );
  });

  test("an event queued in a caller's transaction commits with it, or not at all", async () => {
    const { db } = await fresh();
    const store = new HeartbeatStore(db);
    await store.state(5);
    const kept = await db.transaction().execute(async (trx) => (await store.addEvent('kept', 'hook', 10, trx)).event);
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await store.addEvent('dropped', 'hook', 11, trx);
        throw new Error('the answer could not be stored');
      }),
      /could not be stored/,
    );
    assert.deepEqual(await store.pendingEvents(), [kept]);
  });
});

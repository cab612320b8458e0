import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import type { DatabaseSync } from './database.ts';
import { openDatabase } from './database.ts';
import { sqliteKysely } from './kysely/connection.ts';
import type { NewDispatch } from './linear-dispatch-types.ts';
import { DispatchStore } from './linear-dispatches.ts';

const WORKER = new URL('../../test/support/dispatch-cas-worker.ts', import.meta.url);

function newDispatch(id: string, issueId: string, createdAt = 1_000): NewDispatch {
  return {
    id,
    issueId,
    identifier: issueId.toUpperCase(),
    title: `title of ${issueId}`,
    agentSessionId: `as-${id}`,
    tier: 'medior',
    tierReason: 'estimate 2',
    harness: 'claude',
    model: 'sonnet',
    auditHarness: 'claude',
    auditModel: 'sonnet',
    profile: null,
    repoPath: '/repo',
    branch: `agent/${issueId}`,
    context: { userMessages: [] },
    createdAt,
  };
}

/** Runs `workers` threads that race one operation against the same file; returns what each reported. */
async function race(
  path: string,
  workers: number,
  op: 'transition' | 'claim',
  dispatchId = '',
): Promise<(string | null)[]> {
  const barrier = new SharedArrayBuffer(4);
  const results = await Promise.all(
    Array.from(
      { length: workers },
      () =>
        new Promise<string | null>((resolve, reject) => {
          const worker = new Worker(WORKER, { workerData: { path, barrier, workers, op, dispatchId } });
          worker.once('message', (m: { won: string | null }) => resolve(m.won));
          worker.once('error', reject);
        }),
    ),
  );
  return results;
}

describeEachDatabase('DispatchStore', (fresh) => {
  let store: DispatchStore;

  beforeEach(async () => {
    store = new DispatchStore((await fresh()).db);
  });

  it('inserts a dispatch as queued and refuses a second active one for the same issue (idempotent)', async () => {
    const first = await store.insert(newDispatch('d1', 'i1'));
    assert.equal(first.created, true);
    assert.equal(first.record.status, 'queued');
    assert.equal(first.record.attempt, 1);
    const again = await store.insert(newDispatch('d2', 'i1'));
    assert.equal(again.created, false);
    assert.equal(again.record.id, 'd1');
    assert.equal((await store.list()).length, 1);
    // Once finished, the issue can be dispatched again.
    await store.compareAndSwap('d1', 'queued', 'stopped', 2_000);
    assert.equal((await store.insert(newDispatch('d3', 'i1'))).created, true);
  });

  it("swaps the status only from an expected status, and attempt when given (the edges are the pipeline's: dispatch-transitions.test.ts)", async () => {
    await store.insert(newDispatch('d1', 'i1'));
    assert.equal(await store.compareAndSwap('d1', 'working', 'auditing', 1), null, 'not in the expected status');
    assert.equal((await store.compareAndSwap('d1', 'queued', 'dispatched', 1))?.status, 'dispatched');
    assert.equal((await store.compareAndSwap('d1', 'dispatched', 'working', 2))?.status, 'working');
    assert.equal(await store.compareAndSwap('d1', 'working', 'auditing', 3, { attempt: 2 }), null, 'wrong attempt');
    const auditing = await store.compareAndSwap('d1', 'working', 'auditing', 3, { attempt: 1 });
    assert.equal(auditing?.status, 'auditing');
    const rework = await store.compareAndSwap('d1', 'auditing', 'working', 4, {
      attempt: 1,
      patch: { attempt: 2, context: { lastGaps: ['x'] } },
    });
    assert.equal(rework?.attempt, 2);
    assert.deepEqual(rework?.context.lastGaps, ['x']);
    await store.compareAndSwap('d1', 'working', 'auditing', 5, { attempt: 2 });
    const done = await store.compareAndSwap('d1', 'auditing', 'done', 6);
    assert.equal(done?.completedAt, 6);
    const reopened = await store.compareAndSwap('d1', 'done', 'queued', 7, {
      patch: { roundStart: 3, attempt: 3, stopRequested: false },
    });
    assert.equal(reopened?.completedAt, null);
    assert.equal(reopened?.roundStart, 3);
  });

  it('takes slots in FIFO order under the cap, one statement per claim', async () => {
    for (const [i, id] of ['a', 'b', 'c'].entries()) await store.insert(newDispatch(id, `issue-${id}`, 1_000 + i));
    assert.equal(await store.queuePosition('c'), 3);
    assert.equal((await store.claimNextQueued(2, 10))?.id, 'a');
    assert.equal((await store.claimNextQueued(2, 10))?.id, 'b');
    assert.equal(await store.claimNextQueued(2, 10), null, 'cap of 2 reached');
    assert.equal(await store.queuePosition('c'), 1);
    await store.compareAndSwap('a', 'dispatched', 'stuck', 11);
    assert.equal((await store.claimNextQueued(2, 12))?.id, 'c');
    // A reopened dispatch goes to the back of the queue.
    await store.insert(newDispatch('d', 'issue-d', 2_000));
    await store.compareAndSwap('a', 'stuck', 'queued', 13);
    assert.equal(await store.queuePosition('d'), 1);
    assert.equal(await store.queuePosition('a'), 2);
  });

  it('never exceeds the cap with many concurrent claimers on separate connections (the cluster-wide cap)', async () => {
    for (let i = 0; i < 12; i++) await store.insert(newDispatch(`d${i}`, `issue-${i}`, 1_000 + i));
    // A claim frees nothing, so whatever the interleaving exactly `cap` dispatches hold a slot at the end.
    const claims = await Promise.all(Array.from({ length: 24 }, (_, i) => store.claimNextQueued(3, 10 + i)));
    assert.equal(claims.filter((c) => c !== null).length, 3);
    assert.equal((await store.list(['dispatched'])).length, 3);
    // A slot freed by one finishing goes to one of many concurrent claimers, never two.
    await store.compareAndSwap('d0', 'dispatched', 'stuck', 50);
    const again = await Promise.all(Array.from({ length: 8 }, () => store.claimNextQueued(3, 60)));
    assert.deepEqual(
      again.filter((c) => c !== null).map((c) => c?.id),
      ['d3'],
    );
  });

  it('maps sessions to dispatch phases; the end cause and the end are each claimed once', async () => {
    await store.insert(newDispatch('d1', 'i1'));
    await store.addSession({ sessionId: 's1', dispatchId: 'd1', phase: 'worker', attempt: 1, try: 1, startedAt: 5 });
    await store.addSession({ sessionId: 's2', dispatchId: 'd1', phase: 'audit', attempt: 1, try: 1, startedAt: 6 });
    assert.equal((await store.session('s1'))?.phase, 'worker');
    assert.equal((await store.currentSession('d1'))?.sessionId, 's2');
    assert.equal(await store.setEndCause('s2', 'watchdog'), true);
    assert.equal(await store.setEndCause('s2', 'stop'), false);
    assert.equal((await store.session('s2'))?.endCause, 'watchdog');
    assert.equal(await store.closeSession('s2', 7), true);
    assert.equal(await store.closeSession('s2', 8), false);
    assert.deepEqual(
      (await store.sessions('d1')).map((s) => s.sessionId),
      ['s1', 's2'],
    );
  });

  it('prunes finished dispatches older than the cutoff with their session map', async () => {
    await store.insert(newDispatch('old', 'i1'));
    await store.insert(newDispatch('new', 'i2'));
    await store.insert(newDispatch('live', 'i3'));
    await store.addSession({
      sessionId: 's-old',
      dispatchId: 'old',
      phase: 'worker',
      attempt: 1,
      try: 1,
      startedAt: 1,
    });
    await store.compareAndSwap('old', 'queued', 'stopped', 100);
    await store.compareAndSwap('new', 'queued', 'stopped', 900);
    assert.equal(await store.prune(500), 1);
    assert.equal(await store.get('old'), null);
    assert.equal(await store.session('s-old'), null);
    assert.ok(await store.get('new'));
    assert.ok(await store.get('live'));
  });
});

describe('DispatchStore across connections [sqlite]', () => {
  let dir: { path: string; remove: () => void };
  let db: DatabaseSync;
  let store: DispatchStore;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(join(dir.path, 'state.db'));
    store = new DispatchStore(sqliteKysely(db));
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('lets exactly one of many concurrent connections win a transition', { timeout: 60_000 }, async () => {
    await store.insert(newDispatch('d1', 'i1'));
    await store.compareAndSwap('d1', 'queued', 'dispatched', 1);
    await store.compareAndSwap('d1', 'dispatched', 'working', 2);
    const results = await race(join(dir.path, 'state.db'), 8, 'transition', 'd1');
    assert.equal(results.filter((r) => r === 'd1').length, 1, `winners: ${JSON.stringify(results)}`);
    assert.equal(results.filter((r) => r === null).length, 7);
    assert.equal((await store.get('d1'))?.status, 'auditing');
  });

  it('gives the last free slot to exactly one of many concurrent claimers', { timeout: 60_000 }, async () => {
    for (const id of ['a', 'b', 'c', 'd']) await store.insert(newDispatch(id, `issue-${id}`));
    const results = await race(join(dir.path, 'state.db'), 6, 'claim');
    assert.deepEqual(
      results.filter((r) => r !== null),
      ['a'],
    );
    assert.equal((await store.list(['dispatched'])).length, 1);
  });
});

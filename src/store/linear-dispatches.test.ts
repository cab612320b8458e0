import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openDatabase } from './database.ts';
import type { DatabaseSync } from './database.ts';
import { DispatchStore } from './linear-dispatches.ts';
import type { NewDispatch } from './linear-dispatches.ts';

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
async function race(path: string, workers: number, op: 'transition' | 'claim', dispatchId = ''): Promise<(string | null)[]> {
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

describe('DispatchStore', () => {
  let dir: { path: string; remove: () => void };
  let db: DatabaseSync;
  let store: DispatchStore;

  beforeEach(() => {
    dir = tempDir();
    db = openDatabase(join(dir.path, 'state.db'));
    store = new DispatchStore(db);
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('inserts a dispatch as queued and refuses a second active one for the same issue (idempotent)', () => {
    const first = store.insert(newDispatch('d1', 'i1'));
    assert.equal(first.created, true);
    assert.equal(first.record.status, 'queued');
    assert.equal(first.record.attempt, 1);
    const again = store.insert(newDispatch('d2', 'i1'));
    assert.equal(again.created, false);
    assert.equal(again.record.id, 'd1');
    assert.equal(store.list().length, 1);
    // Once finished, the issue can be dispatched again.
    store.transition('d1', 'queued', 'stopped', 2_000);
    assert.equal(store.insert(newDispatch('d3', 'i1')).created, true);
  });

  it('moves only along the state machine, with compare-and-swap on status and attempt', () => {
    store.insert(newDispatch('d1', 'i1'));
    assert.throws(() => store.transition('d1', 'queued', 'done', 1), /queued → done is not allowed/);
    assert.equal(store.transition('d1', 'working', 'auditing', 1), null, 'not in the expected status');
    assert.equal(store.transition('d1', 'queued', 'dispatched', 1)?.status, 'dispatched');
    assert.equal(store.transition('d1', 'dispatched', 'working', 2)?.status, 'working');
    assert.equal(store.transition('d1', 'working', 'auditing', 3, { attempt: 2 }), null, 'wrong attempt');
    const auditing = store.transition('d1', 'working', 'auditing', 3, { attempt: 1 });
    assert.equal(auditing?.status, 'auditing');
    const rework = store.transition('d1', 'auditing', 'working', 4, { attempt: 1, patch: { attempt: 2, context: { lastGaps: ['x'] } } });
    assert.equal(rework?.attempt, 2);
    assert.deepEqual(rework?.context.lastGaps, ['x']);
    store.transition('d1', 'working', 'auditing', 5, { attempt: 2 });
    const done = store.transition('d1', 'auditing', 'done', 6);
    assert.equal(done?.completedAt, 6);
    const reopened = store.transition('d1', 'done', 'queued', 7, { patch: { roundStart: 3, attempt: 3, stopRequested: false } });
    assert.equal(reopened?.completedAt, null);
    assert.equal(reopened?.roundStart, 3);
  });

  it('takes slots in FIFO order under the cap, one statement per claim', () => {
    for (const [i, id] of ['a', 'b', 'c'].entries()) store.insert(newDispatch(id, `issue-${id}`, 1_000 + i));
    assert.equal(store.queuePosition('c'), 3);
    assert.equal(store.claimNextQueued(2, 10)?.id, 'a');
    assert.equal(store.claimNextQueued(2, 10)?.id, 'b');
    assert.equal(store.claimNextQueued(2, 10), null, 'cap of 2 reached');
    assert.equal(store.queuePosition('c'), 1);
    store.transition('a', 'dispatched', 'stuck', 11);
    assert.equal(store.claimNextQueued(2, 12)?.id, 'c');
    // A reopened dispatch goes to the back of the queue.
    store.insert(newDispatch('d', 'issue-d', 2_000));
    store.transition('a', 'stuck', 'queued', 13);
    assert.equal(store.queuePosition('d'), 1);
    assert.equal(store.queuePosition('a'), 2);
  });

  it('maps sessions to dispatch phases; the end cause and the end are each claimed once', () => {
    store.insert(newDispatch('d1', 'i1'));
    store.addSession({ sessionId: 's1', dispatchId: 'd1', phase: 'worker', attempt: 1, try: 1, startedAt: 5 });
    store.addSession({ sessionId: 's2', dispatchId: 'd1', phase: 'audit', attempt: 1, try: 1, startedAt: 6 });
    assert.equal(store.session('s1')?.phase, 'worker');
    assert.equal(store.currentSession('d1')?.sessionId, 's2');
    assert.equal(store.setEndCause('s2', 'watchdog'), true);
    assert.equal(store.setEndCause('s2', 'stop'), false);
    assert.equal(store.session('s2')?.endCause, 'watchdog');
    assert.equal(store.closeSession('s2', 7), true);
    assert.equal(store.closeSession('s2', 8), false);
    assert.deepEqual(
      store.sessions('d1').map((s) => s.sessionId),
      ['s1', 's2'],
    );
  });

  it('prunes finished dispatches older than the cutoff with their session map', () => {
    store.insert(newDispatch('old', 'i1'));
    store.insert(newDispatch('new', 'i2'));
    store.insert(newDispatch('live', 'i3'));
    store.addSession({ sessionId: 's-old', dispatchId: 'old', phase: 'worker', attempt: 1, try: 1, startedAt: 1 });
    store.transition('old', 'queued', 'stopped', 100);
    store.transition('new', 'queued', 'stopped', 900);
    assert.equal(store.prune(500), 1);
    assert.equal(store.get('old'), null);
    assert.equal(store.session('s-old'), null);
    assert.ok(store.get('new'));
    assert.ok(store.get('live'));
  });

  it('lets exactly one of many concurrent connections win a transition', { timeout: 60_000 }, async () => {
    store.insert(newDispatch('d1', 'i1'));
    store.transition('d1', 'queued', 'dispatched', 1);
    store.transition('d1', 'dispatched', 'working', 2);
    const results = await race(join(dir.path, 'state.db'), 8, 'transition', 'd1');
    assert.equal(results.filter((r) => r === 'd1').length, 1, `winners: ${JSON.stringify(results)}`);
    assert.equal(results.filter((r) => r === null).length, 7);
    assert.equal(store.get('d1')?.status, 'auditing');
  });

  it('gives the last free slot to exactly one of many concurrent claimers', { timeout: 60_000 }, async () => {
    for (const id of ['a', 'b', 'c', 'd']) store.insert(newDispatch(id, `issue-${id}`));
    const results = await race(join(dir.path, 'state.db'), 6, 'claim');
    assert.deepEqual(
      results.filter((r) => r !== null),
      ['a'],
    );
    assert.equal(store.list(['dispatched']).length, 1);
  });
});

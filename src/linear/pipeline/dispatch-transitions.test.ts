import assert from 'node:assert/strict';
import { beforeEach, it } from 'node:test';
import { describeEachDatabase } from '../../../test/support/databases.ts';
import { DispatchStore } from '../../store/linear-dispatches.ts';
import { transitionDispatch } from './dispatch-transitions.ts';

describeEachDatabase('dispatch transitions', (fresh) => {
  let store: DispatchStore;

  beforeEach(async () => {
    store = new DispatchStore((await fresh()).db);
    await store.insert({
      id: 'd1',
      issueId: 'i1',
      identifier: 'I1',
      title: 'title of i1',
      agentSessionId: 'as-d1',
      tier: 'medior',
      tierReason: 'estimate 2',
      harness: 'claude',
      model: 'sonnet',
      auditHarness: 'claude',
      auditModel: 'sonnet',
      profile: null,
      repoPath: '/repo',
      branch: 'agent/i1',
      context: { userMessages: [] },
      createdAt: 1_000,
    });
  });

  it('moves only along the state machine, with compare-and-swap on status and attempt', async () => {
    await assert.rejects(transitionDispatch(store, 'd1', 'queued', 'done', 1), /queued → done is not allowed/);
    await assert.rejects(
      transitionDispatch(store, 'd1', ['queued', 'working'], 'done', 1),
      /queued → done is not allowed/,
    );
    assert.equal((await store.get('d1'))?.status, 'queued', 'a refused edge never reaches the store');
    assert.equal(await transitionDispatch(store, 'd1', 'working', 'auditing', 1), null, 'not in the expected status');
    assert.equal((await transitionDispatch(store, 'd1', 'queued', 'dispatched', 1))?.status, 'dispatched');
    assert.equal((await transitionDispatch(store, 'd1', 'dispatched', 'working', 2))?.status, 'working');
    assert.equal(
      await transitionDispatch(store, 'd1', 'working', 'auditing', 3, { attempt: 2 }),
      null,
      'wrong attempt',
    );
    assert.equal((await transitionDispatch(store, 'd1', 'working', 'auditing', 3, { attempt: 1 }))?.status, 'auditing');
  });
});

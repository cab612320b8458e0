import assert from 'node:assert/strict';
import { beforeEach, it } from 'node:test';
import { describeEachDatabase } from '../../../test/support/databases.ts';
import { PlanningStore } from '../../store/linear-planning.ts';
import { transitionPlanning } from './planning-transitions.ts';

describeEachDatabase('planning transitions', (fresh) => {
  let store: PlanningStore;

  beforeEach(async () => {
    store = new PlanningStore((await fresh()).db);
    await store.create(
      {
        id: 'p1',
        projectId: 'proj',
        projectName: 'Launch',
        issueId: 'i1',
        issueIdentifier: 'ENG-1',
        teamId: 't',
        agentSessionId: null,
        createdBy: null,
      },
      1,
    );
  });

  it('moves only along the state machine; a refused edge never reaches the store', async () => {
    await assert.rejects(
      transitionPlanning(store, 'p1', 'interviewing', 'approved', 2),
      /no transition from interviewing to approved/,
    );
    await assert.rejects(
      transitionPlanning(store, 'p1', 'approved', 'interviewing', 2),
      /no transition from approved to interviewing/,
    );
    assert.equal((await store.get('p1'))?.status, 'interviewing');
    assert.equal(
      await transitionPlanning(store, 'p1', 'plan_review', 'approved', 2),
      null,
      'compare-and-swap: not in plan_review',
    );
    assert.equal((await transitionPlanning(store, 'p1', 'interviewing', 'plan_review', 3))?.status, 'plan_review');
    assert.equal(
      (await transitionPlanning(store, 'p1', 'plan_review', 'interviewing', 4, { lastAudit: ['gap'] }))?.lastAudit?.[0],
      'gap',
    );
  });
});

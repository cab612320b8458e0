import assert from 'node:assert/strict';
import { beforeEach, it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import type { NewPlanningSession } from './linear-planning.ts';
import { PlanningStore } from './linear-planning.ts';

function newSession(id: string, projectId: string, agentSessionId: string | null = null): NewPlanningSession {
  return {
    id,
    projectId,
    projectName: `Project ${projectId}`,
    issueId: `issue-${id}`,
    issueIdentifier: `ENG-${id}`,
    teamId: 't',
    agentSessionId,
    createdBy: null,
  };
}

describeEachDatabase('PlanningStore', (fresh) => {
  let store: PlanningStore;

  beforeEach(async () => {
    store = new PlanningStore((await fresh()).db);
  });

  it('starts one session per project at a time; the running one is returned to a second start', async () => {
    const first = await store.create(newSession('p1', 'proj', 'as-1'), 10);
    assert.equal(first.created, true);
    assert.deepEqual(
      [
        first.session.status,
        first.session.turnCount,
        first.session.history,
        first.session.lastAudit,
        first.session.createdAt,
      ],
      ['interviewing', 0, [], null, 10],
    );
    const again = await store.create(newSession('p2', 'proj'), 11);
    assert.deepEqual([again.created, again.session.id], [false, 'p1']);
    assert.equal((await store.activeForProject('proj'))?.id, 'p1');
    assert.equal((await store.activeForIssue('issue-p1'))?.id, 'p1');
    assert.equal(await store.activeForIssue('issue-p2'), null);
    // Once it ends, the project can be planned again.
    assert.equal((await store.compareAndSwap('p1', 'interviewing', 'abandoned', 12))?.status, 'abandoned');
    assert.equal(await store.activeForProject('proj'), null);
    assert.equal((await store.create(newSession('p3', 'proj', 'as-1'), 13)).created, true);
    assert.equal((await store.forAgentSession('as-1'))?.id, 'p3', 'the newest session of the agent session');
    assert.deepEqual(
      (await store.list()).map((s) => s.id),
      ['p1', 'p3'],
    );
  });

  it('swaps the status only from the expected one, with its patch; updates keep the status', async () => {
    await store.create(newSession('p1', 'proj'), 10);
    assert.equal(await store.compareAndSwap('p1', 'plan_review', 'approved', 11), null, 'not in plan_review');
    const review = await store.compareAndSwap('p1', 'interviewing', 'plan_review', 12, { lastAudit: ['x'] });
    assert.deepEqual([review?.status, review?.lastAudit, review?.updatedAt], ['plan_review', ['x'], 12]);
    const history = [{ role: 'user' as const, content: 'hi' }];
    const updated = await store.update(
      'p1',
      { turnCount: 1, issuesCreated: 2, history, lastAudit: null, agentSessionId: 'as-2' },
      13,
    );
    assert.deepEqual(
      [
        updated?.status,
        updated?.turnCount,
        updated?.issuesCreated,
        updated?.history,
        updated?.lastAudit,
        updated?.agentSessionId,
        updated?.updatedAt,
      ],
      ['plan_review', 1, 2, history, null, 'as-2', 13],
    );
    assert.equal(await store.update('nope', { turnCount: 1 }, 14), null);
    assert.deepEqual(await store.get('p1'), updated);
  });
});

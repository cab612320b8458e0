// The Linear integration end to end: signed webhooks through the real HTTP route, the real @linear/sdk against the fake
// Linear server, the router, the pipeline over the fake agent executables in a real git repository, and the chat
// notifications through an outbox. Audits replay captured verdicts chosen by team key (OK pass, RW fail then pass,
// NO always fail).
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import type { DispatchRecord, DispatchStatus } from '../../src/store/linear-dispatch-types.ts';
import { DispatchStore } from '../../src/store/linear-dispatches.ts';
import { FAKE_IDS } from '../support/fake-linear.ts';
import type { LinearE2E } from '../support/linear-e2e.ts';
import { agentSessionCreated, agentSessionStop, CHAT, delegated, linearE2E } from '../support/linear-e2e.ts';
import { linearFixture } from '../support/linear-webhook-fixtures.ts';
import { waitFor } from '../support/wait-for.ts';

const TIMEOUT = 120_000;

let rigs: LinearE2E[] = [];
async function rig(overrides: Record<string, unknown> = {}): Promise<LinearE2E> {
  const r = await linearE2E(overrides);
  rigs.push(r);
  return r;
}
afterEach(async () => {
  for (const r of rigs) await r.close();
  rigs = [];
});

async function until(r: LinearE2E, issueId: string, status: DispatchStatus): Promise<DispatchRecord> {
  await waitFor(
    `dispatch of ${issueId} to be ${status} (is ${(await r.linear.pipeline.get(issueId))?.status})`,
    async () => (await r.linear.pipeline.get(issueId))?.status === status,
    90_000,
  );
  await r.linear.pipeline.idle();
  return (await r.linear.pipeline.get(issueId)) as DispatchRecord;
}

function ofType(list: Record<string, unknown>[], type: string): string[] {
  return list.filter((a) => a.type === type).map((a) => String(a.body ?? a.parameter ?? ''));
}

async function workers(r: LinearE2E, dispatchId: string) {
  return Promise.all(
    (await new DispatchStore(sqliteKysely(r.db)).sessions(dispatchId))
      .filter((s) => s.phase === 'worker')
      .map(async (s) => ({ ...(await r.manager.get(s.sessionId)), try: s.try })),
  );
}

describe('Linear end to end over the real webhook route', { timeout: TIMEOUT }, () => {
  it('pass: agent session → worker → audit → done; one response, the issue Done, the chat told', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({
      teamId: r.teams.OK,
      title: 'Add a greeting',
      description: 'Add a greeting to the README.',
      estimate: 1,
    });
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, '@switchboard please do this');
    assert.equal(await r.post(payload), 200);
    const d = await until(r, issue.id, 'done');
    assert.equal(d.agentSessionId, agentSessionId);
    const activities = r.activities(agentSessionId);
    assert.equal(activities[0]?.type, 'thought');
    assert.match(String(activities[0]?.body), /^Picked up OK-1: tier junior/);
    const responses = ofType(activities, 'response');
    assert.equal(responses.length, 1);
    assert.match(responses[0] ?? '', /OK-1 is done/);
    assert.equal(r.ws.states.get(issue.stateId)?.name, 'Done');
    assert.deepEqual(r.outbox.to(CHAT).length, 1);
    assert.match(r.outbox.to(CHAT)[0] ?? '', /^Linear OK-1 \(Add a greeting\) is done/);
    // The prompt reached the worker with the session's guidance rules (an array in the payload).
    const worker = (await workers(r, d.id))[0];
    assert.match(worker?.prompt ?? '', /Always open a draft PR and link it in the issue\./);
  });

  it('fail then pass: the worker is re-spawned with the gaps and the dispatch ends done on attempt 2', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({
      teamId: r.teams.RW,
      title: 'Add a greeting',
      description: 'Add a greeting and test it.',
    });
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    const d = await until(r, issue.id, 'done');
    assert.equal(d.attempt, 2);
    assert.ok(
      ofType(r.activities(agentSessionId), 'thought').some((t) =>
        /The audit of attempt 1 failed[\s\S]*attempt 2 of 2/.test(t),
      ),
    );
    assert.equal(ofType(r.activities(agentSessionId), 'response').length, 1);
  });

  it('fail to the attempt limit: stuck, told in Linear and on the chat channel', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({ teamId: r.teams.NO, title: 'Impossible', description: 'Make it perfect.' });
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    const d = await until(r, issue.id, 'stuck');
    assert.equal(d.attempt, 2);
    const errors = ofType(r.activities(agentSessionId), 'error');
    assert.equal(errors.length, 1);
    assert.match(errors[0] ?? '', /NO-1 is stuck: the audit failed 2 times \(maxAttempts 2\)/);
    assert.deepEqual(
      r.outbox.deliveries.map((m) => m.to),
      [CHAT],
    );
    assert.match(r.outbox.to(CHAT)[0] ?? '', /^Linear NO-1 \(Impossible\) is stuck: the audit failed 2 times/);
    assert.equal(r.ws.states.get(issue.stateId)?.name, 'Backlog', 'the issue stays open');
  });

  it('watchdog: a hung worker is killed, retried once, then the dispatch is stuck and the chat told', async () => {
    const r = await rig({ 'linear.pipeline.watchdog.inactivitySec': 60 });
    const issue = r.ws.addIssue({ teamId: r.teams.OK, title: 'Hangs', description: 'Do it. [[hang]]' });
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    await waitFor('the dispatch', async () => (await r.linear.pipeline.get(issue.id)) !== null);
    const id = ((await r.linear.pipeline.get(issue.id)) as DispatchRecord).id;
    for (const n of [1, 2]) {
      await waitFor(
        `worker try ${n} running`,
        async () => (await workers(r, id)).length === n && (await workers(r, id))[n - 1]?.status === 'running',
        60_000,
      );
      r.clock.advance(60_000);
      await waitFor(`worker try ${n} killed`, async () => (await workers(r, id))[n - 1]?.status === 'killed');
    }
    await until(r, issue.id, 'stuck');
    assert.deepEqual(
      (await workers(r, id)).map((w) => [w.try, w.endReason]),
      [
        [1, 'watchdog: no activity for 60 s (limit 60 s)'],
        [2, 'watchdog: no activity for 60 s (limit 60 s)'],
      ],
    );
    assert.match(ofType(r.activities(agentSessionId), 'error')[0] ?? '', /the watchdog killed the worker twice/);
    assert.match(r.outbox.to(CHAT)[0] ?? '', /OK-1 \(Hangs\) is stuck: the watchdog killed the worker twice/);
  });

  it('stop signal: the running worker is killed and the session told; nothing more runs', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({ teamId: r.teams.OK, title: 'Greeting', description: 'Add a greeting. [[hang]]' });
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
    assert.equal(await r.post(payload), 200);
    await waitFor('the dispatch', async () => (await r.linear.pipeline.get(issue.id)) !== null);
    const id = ((await r.linear.pipeline.get(issue.id)) as DispatchRecord).id;
    await waitFor('the worker running', async () => (await workers(r, id))[0]?.status === 'running', 60_000);
    assert.equal(await r.post(agentSessionStop(r.ws, issue, agentSessionId)), 200);
    const d = await until(r, issue.id, 'stopped');
    assert.equal(d.stopRequested, true);
    // The dispatch is marked stopped first, then the worker killed, within the handling of the stop delivery.
    await r.linear.webhooks.worker.idle();
    assert.equal((await workers(r, id))[0]?.status, 'killed');
    assert.match(
      ofType(r.activities(agentSessionId), 'response').at(-1) ?? '',
      /Stopped work on OK-1 \(during the worker\)/,
    );
    assert.equal((await workers(r, id)).length, 1, 'no retry after a stop');
  });

  it('an assignment reported by the Issue webhook and the AppUserNotification is one agent session and one dispatch', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({
      teamId: r.teams.OK,
      title: 'Add a greeting',
      description: 'Add a greeting to the README.',
    });
    issue.delegateId = FAKE_IDS.appUser;
    const notification = linearFixture('app-user-notification-assigned');
    const n = notification.notification as Record<string, unknown>;
    n.issueId = issue.id;
    n.issue = { id: issue.id, identifier: issue.identifier, title: issue.title, teamId: issue.teamId };
    assert.equal(await r.post(delegated(issue)), 200);
    assert.equal(await r.post(notification), 200);
    const d = await until(r, issue.id, 'done');
    assert.equal(r.fake.mutations.filter((m) => m.name === 'agentSessionCreateOnIssue').length, 1);
    const sessions = [...r.ws.agentSessions.values()].filter((s) => s.issueId === issue.id);
    assert.equal(sessions.length, 1);
    assert.equal(d.agentSessionId, sessions[0]?.id);
    const picked = ofType(r.activities(d.agentSessionId ?? ''), 'thought').filter((t) => t.startsWith('Picked up'));
    assert.equal(picked.length, 1, 'one first thought');
    assert.equal((await r.linear.pipeline.list()).length, 1);
  });

  it('planning mode blocks dispatch of the project’s issues until the plan is finalized or abandoned', async () => {
    const r = await rig();
    const comment = linearFixture('comment-create-mention');
    const data = comment.data as Record<string, unknown>;
    data.id = r.ws.newId();
    data.body = '@switchboard plan this project';
    assert.equal(await r.post(comment), 200);
    await waitFor('planning mode', async () => (await r.linear.planner.activeForIssue(FAKE_IDS.issue1)) !== null);
    await r.linear.router.jobs.idle();
    const issue2 = r.ws.findIssue('ENG-2');
    assert.ok(issue2);
    const { payload, agentSessionId } = agentSessionCreated(r.ws, issue2, '@switchboard implement this');
    assert.equal(await r.post(payload), 200);
    await waitFor('the refusal', () => r.activities(agentSessionId).some((a) => a.type === 'response'));
    assert.deepEqual(ofType(r.activities(agentSessionId), 'response'), [
      'This project is in planning mode. Finalize the plan before dispatching implementation.',
    ]);
    assert.equal(await r.linear.pipeline.get(issue2.id), null, 'nothing dispatched');
    const abandon = linearFixture('comment-create-mention');
    const abandonData = abandon.data as Record<string, unknown>;
    abandonData.id = r.ws.newId();
    abandonData.body = 'abandon planning';
    assert.equal(await r.post(abandon), 200);
    await waitFor('planning mode off', async () => (await r.linear.planner.activeForIssue(FAKE_IDS.issue1)) === null);
    assert.equal(await r.linear.planner.isBlocked({ project: { id: FAKE_IDS.project, name: 'Launch' } }), null);
  });

  it('refuses unsigned and badly signed webhooks at the route', async () => {
    const r = await rig();
    const body = JSON.stringify({ ...linearFixture('issue-create'), webhookTimestamp: Date.now() });
    const unsigned = await fetch(`${r.url}/linear/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(unsigned.status, 401);
    const forged = await fetch(`${r.url}/linear/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'linear-signature': 'ab'.repeat(32) },
      body,
    });
    assert.equal(forged.status, 401);
    assert.equal((await r.linear.pipeline.list()).length, 0);
  });
});

// Approvals of Linear-dispatched workers over the real webhook route: the worker (the fake Claude CLI, permission mode
// `default`) asks for its tool, the request is posted once into the dispatch's agent session as an elicitation with
// the choices, a signed `prompted` reply decides it (and a redelivery decides nothing again), a decision from another
// surface is told there as a thought, and a question is answered by its option's number.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { Approval } from '../../src/approvals/approval.ts';
import type { ApprovalDesk } from '../../src/approvals/desk.ts';
import type { DispatchRecord, DispatchStatus } from '../../src/store/linear-dispatch-types.ts';
import type { FakeIssue } from '../support/fake-linear-workspace.ts';
import type { LinearE2E } from '../support/linear-e2e.ts';
import { agentSessionCreated, agentSessionPrompted, linearE2E } from '../support/linear-e2e.ts';
import { waitFor } from '../support/wait-for.ts';

const TIMEOUT = 120_000;

let rigs: LinearE2E[] = [];
async function rig(): Promise<LinearE2E & { approvals: ApprovalDesk }> {
  const r = await linearE2E({ 'linear.pipeline.workerPermissionMode': 'default' }, { approvals: true });
  rigs.push(r);
  const { approvals } = r;
  assert.ok(approvals);
  return { ...r, approvals };
}
afterEach(async () => {
  for (const r of rigs) await r.close();
  rigs = [];
});

function ofType(r: LinearE2E, agentSessionId: string, type: string): string[] {
  return r
    .activities(agentSessionId)
    .filter((a) => a.type === type)
    .map((a) => String(a.body ?? ''));
}

async function until(r: LinearE2E, issueId: string, status: DispatchStatus): Promise<DispatchRecord> {
  await waitFor(
    `dispatch of ${issueId} to be ${status} (is ${(await r.linear.pipeline.get(issueId))?.status})`,
    async () => (await r.linear.pipeline.get(issueId))?.status === status,
    90_000,
  );
  await r.linear.pipeline.idle();
  return (await r.linear.pipeline.get(issueId)) as DispatchRecord;
}

/** Dispatches `issue` from a new agent session and waits for its worker's pending approval and its elicitation. */
async function asked(
  r: LinearE2E & { approvals: ApprovalDesk },
  issue: FakeIssue,
): Promise<{ agentSessionId: string; approval: Approval; elicitation: string }> {
  const { payload, agentSessionId } = agentSessionCreated(r.ws, issue, 'go');
  assert.equal(await r.post(payload), 200);
  const approval = await waitFor('the worker to ask', async () => (await r.approvals.list({ status: 'pending' }))[0]);
  await r.linear.pipeline.idle();
  const elicitation = await waitFor('the elicitation', () => ofType(r, agentSessionId, 'elicitation')[0]);
  return { agentSessionId, approval, elicitation };
}

describe('approvals of Linear-dispatched workers', { timeout: TIMEOUT }, () => {
  it('the request is an elicitation; "allow for session" in Linear decides it once; the worker goes on', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({ teamId: r.teams.OK, title: 'Run a tool', description: 'Do it. [[tool]]' });
    const { agentSessionId, approval, elicitation } = await asked(r, issue);
    assert.equal(approval.tool, 'Bash');
    assert.match(elicitation, new RegExp(`wants to run Bash: echo hello-from-tool \\(approval ${approval.id}\\)`));
    for (const choice of ['**allow**', '**allow for session**', '**always**', '**deny** *reason*'])
      assert.ok(elicitation.includes(choice), `the elicitation offers ${choice}`);

    const reply = agentSessionPrompted(r.ws, issue, agentSessionId, 'Allow for session');
    assert.equal(await r.post(reply), 200);
    const decided = await waitFor('the reply to decide it', async () =>
      (await r.approvals.list({ status: 'allowed' })).find((a) => a.id === approval.id),
    );
    assert.equal(decided.scope, 'session');
    assert.match(decided.decidedBy ?? '', /^linear\|/);

    // Linear sends the same prompt again (a new delivery of the same activity): nothing is decided or said again.
    assert.equal(await r.post(reply, 'redelivered-allow'), 200);
    await r.linear.webhooks.worker.idle();
    const d = await until(r, issue.id, 'done');
    const [again] = await r.approvals.list({ sessionId: approval.sessionId });
    assert.equal(again?.decidedAt, decided.decidedAt);
    assert.equal(ofType(r, agentSessionId, 'elicitation').length, 1, 'the request was posted once');
    const outcomes = ofType(r, agentSessionId, 'thought').filter((t) => t.includes(approval.id));
    assert.equal(outcomes.length, 1, 'the outcome was told once');
    assert.match(outcomes[0] ?? '', /allowed for this session by linear\|/);
    assert.ok(
      !(d.context.userMessages ?? []).some((m) => /allow for session/i.test(m)),
      'the reply was not taken as a prompt for the worker',
    );
    assert.ok(
      ofType(r, agentSessionId, 'thought').some((t) => t.includes('tool said: hello-from-tool')),
      'the worker ran its tool',
    );
  });

  it('a decision from elsewhere is told in the agent session; the worker goes on', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({ teamId: r.teams.OK, title: 'Run a tool', description: 'Do it. [[tool]]' });
    const { agentSessionId, approval } = await asked(r, issue);
    const result = await r.approvals.decide({
      id: approval.id,
      decision: 'deny',
      message: 'not on Fridays',
      by: 'cli',
    });
    assert.equal(result.outcome, 'decided');
    await until(r, issue.id, 'done');
    const outcome = ofType(r, agentSessionId, 'thought').filter((t) => t.includes(approval.id));
    assert.equal(outcome.length, 1);
    assert.match(outcome[0] ?? '', /denied by cli: not on Fridays/);
    assert.ok(
      ofType(r, agentSessionId, 'thought').some((t) => t.includes('tool said: not on Fridays')),
      'the worker got the reason',
    );

    // A reply once nothing is pending is an ordinary prompt (the finished dispatch is reopened with it).
    assert.equal(await r.post(agentSessionPrompted(r.ws, issue, agentSessionId, 'allow')), 200);
    await waitFor('the dispatch to be reopened', async () => (await r.linear.pipeline.get(issue.id))?.attempt === 2);
  });

  it('a question is answered by its option number from Linear', async () => {
    const r = await rig();
    const issue = r.ws.addIssue({ teamId: r.teams.OK, title: 'Ask', description: 'Do it. [[question]]' });
    const { agentSessionId, approval, elicitation } = await asked(r, issue);
    assert.equal(approval.kind, 'question');
    assert.match(elicitation, /Which file should I change\?\n1\. a\.ts\n2\. b\.ts/);
    assert.equal(await r.post(agentSessionPrompted(r.ws, issue, agentSessionId, '2')), 200);
    const answered = await waitFor('the answer', async () =>
      (await r.approvals.list({ status: 'allowed' })).find((a) => a.id === approval.id),
    );
    assert.equal(answered.message, 'Which file should I change? → b.ts');
    assert.match(answered.decidedBy ?? '', /^linear\|/);
  });
});

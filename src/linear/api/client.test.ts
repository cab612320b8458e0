import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FakeLinear } from '../../../test/support/fake-linear.ts';
import { FAKE_IDS, startFakeLinear } from '../../../test/support/fake-linear.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import type { Clock } from '../../core/clock.ts';
import { ManualClock, systemClock } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import { linearSchema } from '../../core/config-linear.ts';
import { silentLogger } from '../../core/logger.ts';
import { openDatabase } from '../../store/database.ts';
import { sqliteKysely } from '../../store/kysely/connection.ts';
import type { LinearAccess } from './access.ts';
import { buildLinearAccess } from './access.ts';
import { LinearApiError } from './types.ts';

function isLinearError(kind: LinearApiError['kind']): (error: unknown) => boolean {
  return (error: unknown) => error instanceof LinearApiError && error.kind === kind;
}

describe('LinearSdkApi against the fake Linear', () => {
  let fake: FakeLinear;

  beforeEach(async () => {
    fake = await startFakeLinear({ projectPageSize: 1 });
  });
  afterEach(async () => {
    await fake.close();
  });

  function access(overrides: Record<string, unknown> = {}, clock: Clock = systemClock()): LinearAccess {
    const config: LinearConfig = linearSchema.parse({
      apiUrl: fake.graphqlUrl,
      apiKey: 'lin_api_fake',
      ...overrides,
      requests: { backoffInitialMs: 1, backoffMaxMs: 4, maxAttempts: 3, ...(overrides.requests as object | undefined) },
    });
    return buildLinearAccess({
      config,
      gateway: { host: '127.0.0.1', port: 1 },
      env: {},
      db: sqliteKysely(openDatabase(':memory:')),
      clock,
      logger: silentLogger(),
    });
  }

  it('reads the viewer through the SDK model API, sending the personal API key without "Bearer"', async () => {
    const { api } = access();
    assert.deepEqual(await api.viewer(), { id: FAKE_IDS.appUser, name: 'switchboard' });
    await api.viewer();
    assert.equal(fake.requestsFor('viewer').length, 1, 'the viewer is remembered');
    assert.equal(fake.requests[0]?.authorization, 'lin_api_fake');
  });

  it('reads an issue in one request: state, team, labels, last comments, relations both ways, branch name', async () => {
    const { api } = access();
    const issue = await api.getIssue('ENG-1');
    assert.equal(issue.id, FAKE_IDS.issue1);
    assert.equal(issue.branchName, 'ada/eng-1-fix-login-redirect-loop');
    assert.equal(issue.state?.type, 'backlog');
    assert.deepEqual(issue.team, { id: FAKE_IDS.team, key: 'ENG', name: 'Engineering' });
    assert.deepEqual(
      issue.labels.map((l) => l.name),
      ['Bug'],
    );
    assert.deepEqual(
      issue.comments.map((c) => [c.body, c.user?.name]),
      [['Seen on Safari only.', 'Ada Lovelace']],
    );
    assert.deepEqual(
      issue.relations.map((r) => [r.type, r.relatedIdentifier]),
      [['blocks', 'ENG-2']],
    );
    assert.equal(issue.estimate, 3);
    const blocked = await api.getIssue(FAKE_IDS.issue2);
    assert.deepEqual(
      blocked.relations.map((r) => [r.type, r.relatedIdentifier]),
      [['blocked_by', 'ENG-1']],
    );
    assert.equal(fake.requests.length, 2);
  });

  it('writes: update, comment, relation, label, sub-issue with the sub_issues feature header', async () => {
    const { api } = access();
    const states = await api.teamStates(FAKE_IDS.team);
    const done = states.find((s) => s.type === 'completed');
    assert.ok(done);
    await api.updateIssue(FAKE_IDS.issue1, { stateId: done.id, estimate: 5 });
    assert.equal(fake.workspace.issues.get(FAKE_IDS.issue1)?.stateId, done.id);
    const comment = await api.createComment(FAKE_IDS.issue1, 'Fixed in #42', { parentId: FAKE_IDS.comment1 });
    assert.equal(fake.workspace.comments.get(comment.id)?.parentId, FAKE_IDS.comment1);
    const top = await api.createIssue({ teamId: FAKE_IDS.team, title: 'Epic: auth' });
    const sub = await api.createIssue({
      teamId: FAKE_IDS.team,
      title: 'Session cookie',
      parentId: top.id,
      estimate: 2,
    });
    assert.equal(sub.identifier, 'ENG-4');
    const creates = fake.requestsFor('issueCreate');
    assert.deepEqual(
      creates.map((r) => r.features),
      [undefined, 'sub_issues'],
    );
    const relation = await api.createRelation(sub.id, top.id, 'blocks');
    assert.equal(fake.workspace.relations.get(relation.id)?.type, 'blocks');
    const label = await api.createLabel(FAKE_IDS.team, 'Needs design');
    assert.deepEqual((await api.teamLabels(FAKE_IDS.team)).map((l) => l.name).sort(), [
      'Bug',
      'Feature',
      'Needs design',
      'Security',
    ]);
    assert.equal(label.name, 'Needs design');
    assert.deepEqual(
      fake.mutations.map((m) => m.name),
      ['issueUpdate', 'commentCreate', 'issueCreate', 'issueCreate', 'issueRelationCreate', 'issueLabelCreate'],
    );
    assert.deepEqual(fake.mutations[0]?.variables, { id: FAKE_IDS.issue1, input: { stateId: done.id, estimate: 5 } });
  });

  it('reads a project with all its issues across pages', async () => {
    const { api } = access();
    const project = await api.getProject(FAKE_IDS.project);
    assert.deepEqual(
      project.issues.map((i) => i.identifier),
      ['ENG-1', 'ENG-2'],
    );
    assert.deepEqual(project.teamIds, [FAKE_IDS.team]);
    assert.equal(fake.requestsFor('project').length, 2);
  });

  it('drives agent sessions: create on issue, ephemeral thought, response, external URLs', async () => {
    const { api } = access();
    const session = await api.createAgentSessionOnIssue('ENG-2');
    await api.createAgentActivity(session.id, { type: 'thought', body: 'Reading the issue' }, { ephemeral: true });
    await api.createAgentActivity(session.id, {
      type: 'action',
      action: 'Running',
      parameter: 'npm test',
      result: 'ok',
    });
    await api.createAgentActivity(session.id, { type: 'response', body: 'Done.' });
    await api.updateAgentSession(session.id, {
      externalUrls: [{ label: 'switchboard', url: 'http://127.0.0.1:18789/s/eng-2' }],
    });
    const stored = fake.workspace.agentSessions.get(session.id);
    assert.deepEqual(
      stored?.activities.map((a) => [a.content.type, a.ephemeral]),
      [
        ['thought', true],
        ['action', false],
        ['response', false],
      ],
    );
    assert.equal(stored?.externalUrls[0]?.label, 'switchboard');
    await assert.rejects(
      api.createAgentActivity(session.id, { type: 'response', body: 'x' }, { ephemeral: true }),
      isLinearError('user'),
    );
    assert.equal(fake.requestsFor('agentActivityCreate').length, 3, 'the invalid ephemeral response never left');
  });

  it('attaches a URL to an issue once per URL, with the client id it is given', async () => {
    const { api } = access();
    const input = {
      issueId: FAKE_IDS.issue1,
      url: 'https://github.example/acme/app/pull/1',
      title: 'PR #1: ENG-1: Fix it',
      subtitle: 'acme/app · eng-1 → main',
      id: '11111111-2222-4333-8444-555555555555',
    };
    const first = await api.createAttachment(input);
    assert.equal(first.id, input.id);
    const again = await api.createAttachment({ ...input, title: 'PR #1 (again)' });
    assert.equal(again.id, first.id);
    const stored = [...fake.workspace.attachments.values()];
    assert.equal(stored.length, 1);
    assert.deepEqual(
      [stored[0]?.issueId, stored[0]?.url, stored[0]?.subtitle],
      [FAKE_IDS.issue1, input.url, input.subtitle],
    );
    assert.equal(fake.requestsFor('attachmentCreate').length, 2);
  });

  it('does not retry a GraphQL user error sent with HTTP 200 (activity on a deleted session)', async () => {
    const { api } = access();
    const error = await api
      .createAgentActivity('deleted-session', { type: 'thought', body: 'hi' })
      .catch((e: unknown) => e);
    assert.ok(error instanceof LinearApiError);
    assert.equal(error.kind, 'user');
    assert.equal(error.retryable, false);
    assert.match(error.message, /AgentSession/);
    assert.equal(fake.requestsFor('agentActivityCreate').length, 1);
    assert.equal(fake.requests[0]?.status, 200);

    fake.script({ match: 'issueUpdate', reply: { kind: 'userError', message: 'Argument Validation Error' } });
    await assert.rejects(api.updateIssue(FAKE_IDS.issue1, { priority: 1 }), isLinearError('user'));
    assert.equal(fake.requestsFor('issueUpdate').length, 1);
    await assert.rejects(api.createLabel(FAKE_IDS.team, 'bug'), isLinearError('user'));
    assert.equal(fake.requestsFor('issueLabelCreate').length, 1);
  });

  it('backs off on 5xx and dropped connections, then succeeds', async () => {
    const { api } = access();
    fake.script(
      { match: 'issue', reply: { kind: 'status', status: 500 } },
      { match: 'issue', reply: { kind: 'drop' } },
    );
    const issue = await api.getIssue('ENG-1');
    assert.equal(issue.identifier, 'ENG-1');
    assert.equal(fake.requestsFor('issue').length, 3);
  });

  it('gives up after requests.maxAttempts with a clear, retryable error', async () => {
    const { api } = access();
    fake.script(...[1, 2, 3, 4].map(() => ({ match: 'issue', reply: { kind: 'status' as const, status: 503 } })));
    const error = await api.getIssue('ENG-1').catch((e: unknown) => e);
    assert.ok(error instanceof LinearApiError);
    assert.equal(error.kind, 'server');
    assert.equal(error.retryable, true);
    assert.match(error.message, /gave up after 3 attempts/);
    assert.equal(fake.requestsFor('issue').length, 3);
  });

  it('fails as network when Linear cannot be reached', async () => {
    const { api } = access({ apiUrl: 'http://127.0.0.1:9/graphql' });
    await assert.rejects(
      api.getIssue('ENG-1'),
      (e: unknown) => e instanceof LinearApiError && e.kind === 'network' && /gave up after 3 attempts/.test(e.message),
    );
  });

  it('waits for the reset Linear announces on 429, on the clock, then retries', async () => {
    const clock = new ManualClock(Date.now());
    const { api } = access({}, clock);
    fake.script({ match: 'issue', reply: { kind: 'rateLimit', resetAt: clock.now() + 30_000 } });
    const pending = api.getIssue('ENG-1');
    await waitFor('a call to wait on the clock', () => clock.pending > 0, 1_000, 2);
    assert.equal(fake.requestsFor('issue').length, 1);
    const waits = clock.pending;
    clock.advance(29_999);
    // The retry is sent from the clock's timer: while that timer has not fired, nothing can have been sent.
    assert.equal(clock.pending, waits, 'the wait for the reset has not ended');
    assert.equal(fake.requestsFor('issue').length, 1, 'nothing is sent before the reset');
    clock.advance(1);
    assert.equal((await pending).identifier, 'ENG-1');
    assert.equal(fake.requestsFor('issue').length, 2);
  });

  it('fails a call as rate_limit at once when the reset is further away than maxRateLimitWaitMs', async () => {
    const clock = new ManualClock(Date.now());
    const { api } = access({ requests: { maxRateLimitWaitMs: 60_000 } }, clock);
    fake.script({ match: 'issue', reply: { kind: 'rateLimit', resetAt: clock.now() + 20 * 60_000 } });
    await assert.rejects(
      api.getIssue('ENG-1'),
      (e: unknown) => e instanceof LinearApiError && e.kind === 'rate_limit' && e.retryable,
    );
    await assert.rejects(api.teamStates(FAKE_IDS.team), isLinearError('rate_limit'));
    assert.equal(fake.requests.length, 1, 'the workspace stays blocked until the reset');
  });

  it('keeps within the per-workspace request budget: waits for a free slot, or refuses beyond maxRateLimitWaitMs', async () => {
    const clock = new ManualClock(Date.now());
    const tight = access({ requests: { budgetPerHour: 3, maxRateLimitWaitMs: 1_000 } }, clock);
    for (let i = 0; i < 3; i += 1) await tight.api.teamStates(FAKE_IDS.team);
    await assert.rejects(
      tight.api.teamStates(FAKE_IDS.team),
      (e: unknown) => e instanceof LinearApiError && e.kind === 'rate_limit' && /budgetPerHour/.test(e.message),
    );
    assert.equal(fake.requests.length, 3);

    const patient = access({ requests: { budgetPerHour: 2, maxRateLimitWaitMs: 3_600_000 } }, clock);
    await patient.api.teamStates(FAKE_IDS.team);
    clock.advance(10 * 60_000);
    await patient.api.teamStates(FAKE_IDS.team);
    const third = patient.api.teamStates(FAKE_IDS.team);
    await waitFor('a call to wait on the clock', () => clock.pending > 0, 1_000, 2);
    assert.equal(fake.requests.length, 5);
    clock.advance(50 * 60_000);
    await third;
    assert.equal(fake.requests.length, 6, 'sent once the first request left the sliding hour');
    assert.equal(patient.budget.remaining, 0);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FAKE_IDS } from '../../../test/support/fake-linear-workspace.ts';
import { LINEAR_FIXTURES, linearFixture } from '../../../test/support/linear-webhook-fixtures.ts';
import type { LinearEvent } from './events.ts';
import { extractMentions, InvalidPayloadError, parseLinearEvent } from './parse.ts';

const ctx = { deliveryId: 'd-1', appUserId: async () => FAKE_IDS.appUser };

async function eventOf(payload: unknown): Promise<LinearEvent> {
  const parsed = await parseLinearEvent(payload, ctx);
  assert.equal(parsed.kind, 'event', parsed.kind === 'ignored' ? parsed.reason : '');
  return parsed.event;
}

async function ignoredReason(payload: unknown): Promise<string> {
  const parsed = await parseLinearEvent(payload, ctx);
  assert.equal(parsed.kind, 'ignored');
  return parsed.reason;
}

describe('parseLinearEvent', () => {
  it('turns every fixture into the expected event type', async () => {
    const expected: Record<(typeof LINEAR_FIXTURES)[number], LinearEvent['type']> = {
      'agent-session-created': 'agentSession.created',
      'agent-session-prompted': 'agentSession.prompted',
      'agent-session-stop': 'agentSession.stop',
      'comment-create-mention': 'comment.created',
      'issue-create': 'issue.created',
      'issue-update-delegated': 'issue.assigned',
      'app-user-notification-assigned': 'appUserNotification',
      'app-user-notification-mention': 'appUserNotification',
    };
    for (const name of LINEAR_FIXTURES) {
      const event = await eventOf(linearFixture(name));
      assert.equal(event.type, expected[name], name);
      assert.equal(event.deliveryId, 'd-1');
      assert.equal(event.organizationId, FAKE_IDS.organization);
    }
  });

  it('reads an agent session created event: issue, comment, guidance rules, previous comments', async () => {
    const event = await eventOf(linearFixture('agent-session-created'));
    assert.equal(event.type, 'agentSession.created');
    if (event.type !== 'agentSession.created') return;
    assert.equal(event.agentSessionId, FAKE_IDS.agentSession);
    assert.equal(event.appUserId, FAKE_IDS.appUser);
    assert.deepEqual(event.issue, {
      id: FAKE_IDS.issue1,
      identifier: 'ENG-1',
      title: 'Fix login redirect loop',
      teamId: FAKE_IDS.team,
      url: 'https://linear.app/acme/issue/ENG-1/fix-login-redirect-loop',
    });
    assert.match(event.comment?.body ?? '', /can you take this one/);
    assert.deepEqual(event.guidance, ['Always open a draft PR and link it in the issue.']);
    assert.equal(event.previousComments.length, 1);
    assert.equal(event.creator?.name, 'Ada Lovelace');
    assert.match(event.promptContext ?? '', /<issue identifier="ENG-1">/);
  });

  it('reads a prompt, and the stop signal as its own event', async () => {
    const prompted = await eventOf(linearFixture('agent-session-prompted'));
    assert.equal(prompted.type, 'agentSession.prompted');
    if (prompted.type === 'agentSession.prompted') {
      assert.equal(prompted.body, 'Use the existing session cookie helper instead of a new one.');
      assert.equal(prompted.author?.id, FAKE_IDS.human);
      assert.equal(prompted.sourceCommentId, '8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e');
    }
    const stop = await eventOf(linearFixture('agent-session-stop'));
    assert.equal(stop.type, 'agentSession.stop');
    if (stop.type === 'agentSession.stop') assert.equal(stop.agentSessionId, FAKE_IDS.agentSession);
  });

  it("ignores echoes of the app's own activities, comments and issues", async () => {
    const echo = linearFixture('agent-session-prompted') as { agentActivity: Record<string, unknown> };
    echo.agentActivity.userId = FAKE_IDS.appUser;
    echo.agentActivity.user = {
      id: FAKE_IDS.appUser,
      name: 'switchboard',
      email: 'switchboard@oauthapp.linear.app',
      url: '',
    };
    assert.match(await ignoredReason(echo), /echo/);

    const thought = linearFixture('agent-session-prompted') as { agentActivity: { content: Record<string, unknown> } };
    thought.agentActivity.content = { type: 'thought', body: 'Looking at the redirect handler' };
    assert.match(await ignoredReason(thought), /echo of the app's own thought/);

    const ownComment = linearFixture('comment-create-mention') as { data: Record<string, unknown> };
    ownComment.data.userId = FAKE_IDS.appUser;
    ownComment.data.user = { id: FAKE_IDS.appUser, name: 'switchboard' };
    assert.match(await ignoredReason(ownComment), /echo of the app's own comment/);

    const ownIssue = linearFixture('issue-create') as { data: Record<string, unknown> };
    ownIssue.data.creatorId = FAKE_IDS.appUser;
    assert.match(await ignoredReason(ownIssue), /created by the app/);
  });

  it('reads comments with their @mentions', async () => {
    const event = await eventOf(linearFixture('comment-create-mention'));
    assert.equal(event.type, 'comment.created');
    if (event.type !== 'comment.created') return;
    assert.deepEqual(event.mentions, ['qa']);
    assert.equal(event.issue?.identifier, 'ENG-1');
    assert.equal(event.author?.id, FAKE_IDS.human);
    assert.deepEqual(extractMentions('@QA and @dev-team, mail me at ada@acme.test; @qa again'), ['qa', 'dev-team']);
  });

  it('reads an issue create for triage', async () => {
    const event = await eventOf(linearFixture('issue-create'));
    assert.equal(event.type, 'issue.created');
    if (event.type !== 'issue.created') return;
    assert.equal(event.issue.identifier, 'ENG-3');
    assert.equal(event.issue.stateType, 'triage');
    assert.equal(event.issue.teamId, FAKE_IDS.team);
    assert.equal(event.issue.estimate, null);
  });

  it('turns a delegation or assignment to the app (per updatedFrom) into issue.assigned, and nothing else', async () => {
    const delegated = await eventOf(linearFixture('issue-update-delegated'));
    assert.equal(delegated.type, 'issue.assigned');
    if (delegated.type === 'issue.assigned') assert.equal(delegated.via, 'delegate');

    const assigned = linearFixture('issue-update-delegated') as {
      data: Record<string, unknown>;
      updatedFrom: Record<string, unknown>;
    };
    assigned.data.delegateId = null;
    assigned.data.assigneeId = FAKE_IDS.appUser;
    assigned.updatedFrom = { updatedAt: '2026-03-01T09:02:00.000Z', assigneeId: FAKE_IDS.human };
    const event = await eventOf(assigned);
    assert.equal(event.type === 'issue.assigned' && event.via, 'assignee');

    const otherChange = linearFixture('issue-update-delegated') as { updatedFrom: Record<string, unknown> };
    otherChange.updatedFrom = { updatedAt: '2026-03-01T09:02:00.000Z', title: 'Audit log' };
    assert.match(await ignoredReason(otherChange), /not an assignment/);

    const toSomeoneElse = linearFixture('issue-update-delegated') as { data: Record<string, unknown> };
    toSomeoneElse.data.delegateId = FAKE_IDS.human;
    assert.match(await ignoredReason(toSomeoneElse), /not an assignment/);
  });

  it('reads app user notifications (assignment, mention)', async () => {
    const assigned = await eventOf(linearFixture('app-user-notification-assigned'));
    assert.equal(assigned.type === 'appUserNotification' && assigned.action, 'issueAssignedToYou');
    const mention = await eventOf(linearFixture('app-user-notification-mention'));
    assert.equal(mention.type, 'appUserNotification');
    if (mention.type === 'appUserNotification') {
      assert.equal(mention.action, 'issueCommentMention');
      assert.equal(mention.comment?.body, '@switchboard what is blocking this?');
      assert.equal(mention.issue?.identifier, 'ENG-1');
    }
  });

  it('acknowledges unknown types and actions without an event', async () => {
    assert.match(
      await ignoredReason({ type: 'Project', action: 'update', organizationId: 'o', createdAt: 'x', data: {} }),
      /Project is not handled/,
    );
    const odd = linearFixture('app-user-notification-assigned');
    odd.action = 'somethingNew';
    assert.match(await ignoredReason(odd), /somethingNew is not handled/);
    assert.match(await ignoredReason({ nothing: true }), /\(none\)/);
  });

  it('refuses a known type with the wrong shape, naming the field', async () => {
    const broken = linearFixture('agent-session-created') as { agentSession: Record<string, unknown> };
    delete broken.agentSession.id;
    await assert.rejects(
      parseLinearEvent(broken, ctx),
      (error: unknown) => error instanceof InvalidPayloadError && /agentSession\.id/.test(error.message),
    );
  });

  it('asks for the app user only when the payload does not carry it, and propagates a failed lookup', async () => {
    let asked = 0;
    const failing = {
      deliveryId: 'd',
      appUserId: async () => {
        asked += 1;
        throw new Error('viewer unavailable');
      },
    };
    await parseLinearEvent(linearFixture('agent-session-created'), failing);
    assert.equal(asked, 0);
    await assert.rejects(parseLinearEvent(linearFixture('issue-update-delegated'), failing), /viewer unavailable/);
    assert.equal(asked, 1);
  });
});

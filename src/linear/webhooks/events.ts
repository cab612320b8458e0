// The typed Linear webhook events handed to the pipeline, and the handler interface it implements.

/** An issue as a webhook refers to it (agent sessions, comments, notifications carry only these fields). */
export interface WebhookIssueRef {
  id: string;
  identifier: string | null;
  title: string | null;
  teamId: string | null;
  url: string | null;
}

/** An issue as Issue webhooks carry it. */
export interface WebhookIssue extends WebhookIssueRef {
  identifier: string;
  title: string;
  description: string | null;
  stateId: string | null;
  /** backlog | unstarted | started | completed | canceled | triage */
  stateType: string | null;
  priority: number | null;
  estimate: number | null;
  assigneeId: string | null;
  delegateId: string | null;
  creatorId: string | null;
  projectId: string | null;
  parentId: string | null;
  labelIds: string[];
}

export interface WebhookUserRef {
  id: string;
  name: string | null;
}

export interface WebhookComment {
  id: string;
  body: string;
  userId: string | null;
}

/** Fields every event has. `deliveryId` is stable across redeliveries: use it to make handling idempotent. */
interface EventBase {
  deliveryId: string;
  organizationId: string;
  /** When Linear created the payload (ISO). */
  createdAt: string;
}

/** The app-user notification kinds Linear sends (AppUserNotification `action`). */
export const APP_USER_NOTIFICATION_ACTIONS = [
  'issueAssignedToYou',
  'issueUnassignedFromYou',
  'issueCommentMention',
  'issueNewComment',
  'issueStatusChanged',
  'issueMention',
  'issueCommentReaction',
  'issueEmojiReaction',
] as const;
export type AppUserNotificationAction = (typeof APP_USER_NOTIFICATION_ACTIONS)[number];

/** A Linear webhook event the pipeline acts on. */
export type LinearEvent =
  | (EventBase & {
      /** An agent session was opened (mention or delegation); send the first activity within 10 s. */
      type: 'agentSession.created';
      appUserId: string;
      agentSessionId: string;
      issue: WebhookIssueRef | null;
      /** The comment that started the session, when it started from one. */
      comment: WebhookComment | null;
      creator: WebhookUserRef | null;
      promptContext: string | null;
      /** Guidance rules, nearest team first as Linear sends them. */
      guidance: string[];
      previousComments: WebhookComment[];
    })
  | (EventBase & {
      /** A person wrote to an existing agent session. */
      type: 'agentSession.prompted';
      appUserId: string;
      agentSessionId: string;
      issue: WebhookIssueRef | null;
      activityId: string;
      body: string;
      author: WebhookUserRef | null;
      sourceCommentId: string | null;
    })
  | (EventBase & {
      /** The user pressed stop: halt the session's work now. */
      type: 'agentSession.stop';
      appUserId: string;
      agentSessionId: string;
      issue: WebhookIssueRef | null;
      activityId: string;
      author: WebhookUserRef | null;
    })
  | (EventBase & {
      /** A comment was written by someone other than the app (@mention routing). */
      type: 'comment.created';
      commentId: string;
      body: string;
      parentId: string | null;
      issue: WebhookIssueRef | null;
      author: WebhookUserRef | null;
      /** @handles in the body, lower-cased, without the @, in order of appearance. */
      mentions: string[];
    })
  | (EventBase & {
      /** A new issue, created by someone other than the app (auto-triage). */
      type: 'issue.created';
      issue: WebhookIssue;
      actor: WebhookUserRef | null;
    })
  | (EventBase & {
      /** The issue was just assigned or delegated to the app user (read from `updatedFrom`). */
      type: 'issue.assigned';
      issue: WebhookIssue;
      via: 'assignee' | 'delegate';
      actor: WebhookUserRef | null;
    })
  | (EventBase & {
      type: 'appUserNotification';
      appUserId: string;
      action: AppUserNotificationAction;
      notificationId: string;
      issue: WebhookIssueRef | null;
      comment: WebhookComment | null;
      actor: WebhookUserRef | null;
    });

export type LinearEventType = LinearEvent['type'];

/**
 * What the webhook worker hands events to (the pipeline implements it). Delivery is at least once: the same
 * `deliveryId` can arrive again after a crash or a failed attempt, so handling must be idempotent. Resolve once the
 * event is durably taken over (not when the work it starts is finished); a rejection is retried with backoff and, after
 * `linear.webhooks.maxAttempts`, dead-lettered. Events of one agent session or issue are handed over one at a time.
 */
export interface LinearEventHandler {
  handle(event: LinearEvent): Promise<void>;
}

// Parses verified webhook payloads with zod into LinearEvent, and decides what is not for the pipeline: echoes of the
// app's own actions, updates that are not an assignment to the app, and types nobody handles.
import { z } from 'zod';
import { formatZodError } from '../../core/errors.ts';
import type {
  AppUserNotificationAction,
  LinearEvent,
  WebhookComment,
  WebhookIssue,
  WebhookIssueRef,
  WebhookUserRef,
} from './events.ts';
import { APP_USER_NOTIFICATION_ACTIONS } from './events.ts';

/** A payload that can never become an event (wrong shape); retrying will not help. */
export class InvalidPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidPayloadError';
  }
}

/** The parse of one delivery: an event for the handler, or why it is acknowledged without one. */
export type ParsedDelivery = { kind: 'event'; event: LinearEvent } | { kind: 'ignored'; reason: string };

export interface ParseContext {
  deliveryId: string;
  /** The app user's id; asked only for payloads that do not carry it (Comment, Issue). Throws when unknown. */
  appUserId: () => Promise<string>;
}

const str = z.string();
const userRef = z.object({ id: str, name: str.nullish() });
const issueRef = z.object({
  id: str,
  identifier: str.nullish(),
  title: str.nullish(),
  teamId: str.nullish(),
  team: z.object({ id: str }).nullish(),
  url: str.nullish(),
});
const commentRef = z.object({ id: str, body: str, userId: str.nullish() });
const base = { type: str, action: str, organizationId: str, createdAt: str, webhookId: str.nullish() };

const agentSessionEvent = z.object({
  ...base,
  appUserId: str,
  agentSession: z.object({
    id: str,
    issue: issueRef.nullish(),
    comment: commentRef.nullish(),
    creator: userRef.nullish(),
  }),
  agentActivity: z
    .object({
      id: str,
      content: z.object({ type: str, body: str.nullish() }).loose(),
      signal: str.nullish(),
      userId: str.nullish(),
      user: userRef.nullish(),
      sourceCommentId: str.nullish(),
    })
    .nullish(),
  previousComments: z.array(commentRef).nullish(),
  guidance: z.union([z.array(z.object({ body: str }).loose()), str]).nullish(),
  promptContext: str.nullish(),
});

const commentEvent = z.object({
  ...base,
  actor: userRef.nullish(),
  data: z.object({
    id: str,
    body: str,
    userId: str.nullish(),
    user: userRef.nullish(),
    parentId: str.nullish(),
    issueId: str.nullish(),
    issue: issueRef.nullish(),
  }),
});

const issueData = z.object({
  id: str,
  identifier: str,
  title: str,
  description: str.nullish(),
  url: str.nullish(),
  teamId: str.nullish(),
  team: z.object({ id: str }).nullish(),
  stateId: str.nullish(),
  state: z.object({ type: str }).loose().nullish(),
  priority: z.number().nullish(),
  estimate: z.number().nullish(),
  assigneeId: str.nullish(),
  delegateId: str.nullish(),
  creatorId: str.nullish(),
  projectId: str.nullish(),
  parentId: str.nullish(),
  labelIds: z.array(str).nullish(),
});

const issueEvent = z.object({
  ...base,
  actor: userRef.nullish(),
  data: issueData,
  updatedFrom: z.record(str, z.unknown()).nullish(),
});

const notificationEvent = z.object({
  ...base,
  appUserId: str,
  notification: z
    .object({
      id: str,
      type: str.nullish(),
      issue: issueRef.nullish(),
      comment: commentRef.nullish(),
      actor: userRef.nullish(),
    })
    .loose(),
});

function parseWith<T extends z.ZodType>(schema: T, payload: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new InvalidPayloadError(`${what} payload: ${formatZodError(parsed.error)}`);
  return parsed.data;
}

function toIssueRef(issue: z.infer<typeof issueRef> | null | undefined): WebhookIssueRef | null {
  if (!issue) return null;
  return {
    id: issue.id,
    identifier: issue.identifier ?? null,
    title: issue.title ?? null,
    teamId: issue.teamId ?? issue.team?.id ?? null,
    url: issue.url ?? null,
  };
}

function toUser(user: z.infer<typeof userRef> | null | undefined): WebhookUserRef | null {
  return user ? { id: user.id, name: user.name ?? null } : null;
}

function toComment(comment: z.infer<typeof commentRef> | null | undefined): WebhookComment | null {
  return comment ? { id: comment.id, body: comment.body, userId: comment.userId ?? null } : null;
}

function toIssue(data: z.infer<typeof issueData>): WebhookIssue {
  return {
    id: data.id,
    identifier: data.identifier,
    title: data.title,
    description: data.description ?? null,
    url: data.url ?? null,
    teamId: data.teamId ?? data.team?.id ?? null,
    stateId: data.stateId ?? null,
    stateType: data.state?.type ?? null,
    priority: data.priority ?? null,
    estimate: data.estimate ?? null,
    assigneeId: data.assigneeId ?? null,
    delegateId: data.delegateId ?? null,
    creatorId: data.creatorId ?? null,
    projectId: data.projectId ?? null,
    parentId: data.parentId ?? null,
    labelIds: data.labelIds ?? [],
  };
}

/** @handles in a comment body, lower-cased, unique, in order (e-mail addresses are not handles). */
export function extractMentions(body: string): string[] {
  const out: string[] = [];
  for (const match of body.matchAll(/(^|[^\w@.])@([A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9_]|[A-Za-z0-9])/g)) {
    const handle = (match[2] as string).toLowerCase();
    if (!out.includes(handle)) out.push(handle);
  }
  return out;
}

function agentSession(payload: unknown, ctx: ParseContext): ParsedDelivery {
  const p = parseWith(agentSessionEvent, payload, 'AgentSessionEvent');
  const common = {
    deliveryId: ctx.deliveryId,
    organizationId: p.organizationId,
    createdAt: p.createdAt,
    appUserId: p.appUserId,
    agentSessionId: p.agentSession.id,
    issue: toIssueRef(p.agentSession.issue),
  };
  if (p.action === 'created') {
    const guidance = typeof p.guidance === 'string' ? [p.guidance] : (p.guidance ?? []).map((g) => g.body);
    return {
      kind: 'event',
      event: {
        ...common,
        type: 'agentSession.created',
        comment: toComment(p.agentSession.comment),
        creator: toUser(p.agentSession.creator),
        promptContext: p.promptContext ?? null,
        guidance,
        previousComments: (p.previousComments ?? []).map((c) => toComment(c) as WebhookComment),
      },
    };
  }
  if (p.action !== 'prompted')
    return { kind: 'ignored', reason: `AgentSessionEvent action ${p.action} is not handled` };
  const activity = p.agentActivity;
  if (!activity)
    throw new InvalidPayloadError('AgentSessionEvent payload: agentActivity: required for a prompted event');
  const author = toUser(activity.user) ?? (activity.userId ? { id: activity.userId, name: null } : null);
  if (activity.signal === 'stop')
    return { kind: 'event', event: { ...common, type: 'agentSession.stop', activityId: activity.id, author } };
  // Echo of the app's own activity: written by the app user, or not a prompt at all (thought/action/response/…).
  if (author?.id === p.appUserId || activity.content.type !== 'prompt') {
    return { kind: 'ignored', reason: `echo of the app's own ${activity.content.type} activity` };
  }
  // A prompt without text asks for nothing (and must not start or reopen a dispatch).
  const body = activity.content.body ?? '';
  if (!body.trim()) return { kind: 'ignored', reason: 'prompt without a body' };
  return {
    kind: 'event',
    event: {
      ...common,
      type: 'agentSession.prompted',
      activityId: activity.id,
      body,
      author,
      sourceCommentId: activity.sourceCommentId ?? null,
    },
  };
}

async function comment(payload: unknown, ctx: ParseContext): Promise<ParsedDelivery> {
  const p = parseWith(commentEvent, payload, 'Comment');
  if (p.action !== 'create') return { kind: 'ignored', reason: `Comment ${p.action} is not handled` };
  const author = toUser(p.data.user) ?? toUser(p.actor) ?? (p.data.userId ? { id: p.data.userId, name: null } : null);
  if (author && author.id === (await ctx.appUserId()))
    return { kind: 'ignored', reason: "echo of the app's own comment" };
  const issue =
    toIssueRef(p.data.issue) ??
    (p.data.issueId ? { id: p.data.issueId, identifier: null, title: null, teamId: null, url: null } : null);
  return {
    kind: 'event',
    event: {
      type: 'comment.created',
      deliveryId: ctx.deliveryId,
      organizationId: p.organizationId,
      createdAt: p.createdAt,
      commentId: p.data.id,
      body: p.data.body,
      parentId: p.data.parentId ?? null,
      issue,
      author,
      mentions: extractMentions(p.data.body),
    },
  };
}

async function issue(payload: unknown, ctx: ParseContext): Promise<ParsedDelivery> {
  const p = parseWith(issueEvent, payload, 'Issue');
  const base = {
    deliveryId: ctx.deliveryId,
    organizationId: p.organizationId,
    createdAt: p.createdAt,
    issue: toIssue(p.data),
    actor: toUser(p.actor),
  };
  const appUserId = await ctx.appUserId();
  if (p.action === 'create') {
    if (p.data.creatorId === appUserId) return { kind: 'ignored', reason: 'echo: issue created by the app' };
    return { kind: 'event', event: { ...base, type: 'issue.created' } };
  }
  if (p.action !== 'update') return { kind: 'ignored', reason: `Issue ${p.action} is not handled` };
  const from = p.updatedFrom ?? {};
  // Linear lists in updatedFrom the previous value of every field that changed.
  if ('delegateId' in from && p.data.delegateId === appUserId && from.delegateId !== appUserId) {
    return { kind: 'event', event: { ...base, type: 'issue.assigned', via: 'delegate' } };
  }
  if ('assigneeId' in from && p.data.assigneeId === appUserId && from.assigneeId !== appUserId) {
    return { kind: 'event', event: { ...base, type: 'issue.assigned', via: 'assignee' } };
  }
  return { kind: 'ignored', reason: 'issue update is not an assignment to the app' };
}

function notification(payload: unknown, ctx: ParseContext): ParsedDelivery {
  const p = parseWith(notificationEvent, payload, 'AppUserNotification');
  if (!(APP_USER_NOTIFICATION_ACTIONS as readonly string[]).includes(p.action))
    return { kind: 'ignored', reason: `AppUserNotification ${p.action} is not handled` };
  return {
    kind: 'event',
    event: {
      type: 'appUserNotification',
      deliveryId: ctx.deliveryId,
      organizationId: p.organizationId,
      createdAt: p.createdAt,
      appUserId: p.appUserId,
      action: p.action as AppUserNotificationAction,
      notificationId: p.notification.id,
      issue: toIssueRef(p.notification.issue),
      comment: toComment(p.notification.comment),
      actor: toUser(p.notification.actor),
    },
  };
}

/**
 * Parses one verified payload. Returns an event, or `ignored` with the reason (unknown types, echoes, irrelevant
 * updates); throws InvalidPayloadError for a payload of a known type with the wrong shape, and whatever `appUserId`
 * throws when the app user cannot be determined (the worker retries those).
 */
export async function parseLinearEvent(payload: unknown, ctx: ParseContext): Promise<ParsedDelivery> {
  const type = typeof payload === 'object' && payload !== null ? (payload as { type?: unknown }).type : undefined;
  switch (type) {
    case 'AgentSessionEvent':
      return agentSession(payload, ctx);
    case 'Comment':
      return comment(payload, ctx);
    case 'Issue':
      return issue(payload, ctx);
    case 'AppUserNotification':
      return notification(payload, ctx);
    default:
      return { kind: 'ignored', reason: `webhook type ${typeof type === 'string' ? type : '(none)'} is not handled` };
  }
}

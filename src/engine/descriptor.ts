// Session descriptors (engine-session-types seed): validated when read back from a log, keyed so that the same
// conversation always maps to the same session, never re-derived from anything but the first log record.
import { z } from 'zod';
import type { InboundMessage } from '../channels/connector.ts';
import { formatTarget, parseTarget } from '../channels/connector.ts';
import type { SessionDescriptor } from './api.ts';

const text = z.string().min(1);

/** The zod schema of a persisted descriptor (strict: unknown keys make it invalid). */
export const descriptorSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('user'), connector: text, userId: text, channelId: text }),
  z.strictObject({ type: z.literal('cron'), id: text }),
  z.strictObject({ type: z.literal('heartbeat') }),
  z.strictObject({ type: z.literal('subagent'), id: text, parentSessionId: text, name: text }),
]);

/** Validates a descriptor read from a log; returns null when it is missing or malformed (the caller skips the log). */
export function parseDescriptor(value: unknown): SessionDescriptor | null {
  const result = descriptorSchema.safeParse(value);
  if (!result.success) return null;
  const d = result.data;
  // A user session must be able to route its replies back.
  if (d.type === 'user' && !parseTarget(d.channelId)) return null;
  return d;
}

/**
 * The stable key of a descriptor: user → connector + channel + user, cron → task id, heartbeat → a singleton,
 * subagent → its id. Two descriptors with the same key are the same session.
 */
export function descriptorKey(d: SessionDescriptor): string {
  switch (d.type) {
    case 'user':
      return `user:${d.connector}:${d.channelId}:${d.userId}`;
    case 'cron':
      return `cron:${d.id}`;
    case 'heartbeat':
      return 'heartbeat';
    case 'subagent':
      return `subagent:${d.id}`;
  }
}

/** The user descriptor of the conversation a chat message belongs to; channelId is the formatted target. */
export function userDescriptor(message: Pick<InboundMessage, 'target' | 'userId'>): SessionDescriptor {
  return {
    type: 'user',
    connector: message.target.channel,
    userId: message.userId,
    channelId: formatTarget(message.target),
  };
}

/** One line naming a session for people: `user telegram|42 (42)`, `cron nightly`, `subagent fixer (parent abc)`. */
export function describeDescriptor(d: SessionDescriptor): string {
  switch (d.type) {
    case 'user':
      return `user ${d.channelId} (${d.userId})`;
    case 'cron':
      return `cron ${d.id}`;
    case 'heartbeat':
      return 'heartbeat';
    case 'subagent':
      return `subagent ${d.name} (parent ${d.parentSessionId})`;
  }
}

/** The origin a session's messages carry when it posts to another session. */
export function originOf(d: SessionDescriptor, sessionId: string): string {
  switch (d.type) {
    case 'subagent':
      return `subagent:${d.name}`;
    case 'cron':
      return `cron:${d.id}`;
    case 'heartbeat':
      return 'heartbeat';
    case 'user':
      return `session:${sessionId}`;
  }
}

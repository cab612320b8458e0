// signal-cli's `receive` events → what the connector acts on: who sent what to which conversation. The event data is
// `{ account, envelope }` (the daemon's SSE form) or the same wrapped in a JSON-RPC `receive` notification (its
// socket/stdin form); both are accepted. Conversations are a number (`+15551234567`) for a direct message and
// `group.<base64 group id>` for a group, so a channel string reads `signal|+15551234567` or `signal|group.<id>`.
import { z } from 'zod';
import { accountKey } from '../../core/config-accounts.ts';
import type { ChannelTarget } from '../connector.ts';
import type { SignalRecipient } from './signal-rpc.ts';

/** The prefix of a group conversation's chat id (`group.<base64 group id>`). */
export const GROUP_PREFIX = 'group.';

const envelopeSchema = z
  .object({
    source: z.string().nullish(),
    sourceNumber: z.string().nullish(),
    sourceUuid: z.string().nullish(),
    sourceName: z.string().nullish(),
    timestamp: z.number(),
    dataMessage: z
      .object({
        message: z.string().nullish(),
        groupInfo: z.object({ groupId: z.string(), type: z.string().nullish() }).loose().nullish(),
        attachments: z.array(z.unknown()).nullish(),
      })
      .loose()
      .nullish(),
  })
  .loose();

const payloadSchema = z.object({ account: z.string().nullish(), envelope: envelopeSchema.nullish() }).loose();
const notificationSchema = z.object({ method: z.literal('receive'), params: payloadSchema }).loose();

/** A data message from a person, as the connector sees it. */
export interface SignalIncoming {
  /** `<sender>:<timestamp>`: the same when signal-cli delivers the message again (used to deduplicate). */
  id: string;
  /** The sender's number, or their service id (uuid) when Signal does not share the number. */
  sender: string;
  senderName?: string;
  /** The conversation: the sender's number (a direct message) or `group.<id>`. */
  chat: string;
  /** The text; empty for a message with only attachments. */
  text: string;
  hasAttachments: boolean;
  timestamp: number;
}

/**
 * Parses the data of one `receive` event; null for anything that is not a person's data message with text or
 * attachments (receipts, typing, sync messages, reactions, group updates) or that does not parse.
 */
export function parseReceive(data: string): SignalIncoming | null {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return null;
  }
  const wrapped = notificationSchema.safeParse(json);
  const payload = wrapped.success ? wrapped.data.params : payloadSchema.safeParse(json).data;
  const envelope = payload?.envelope;
  const message = envelope?.dataMessage;
  if (!envelope || !message) return null;
  const sender = envelope.sourceNumber ?? envelope.source ?? envelope.sourceUuid;
  if (!sender) return null;
  const group = message.groupInfo;
  if (group && group.type && group.type !== 'DELIVER') return null;
  const text = message.message ?? '';
  const hasAttachments = (message.attachments?.length ?? 0) > 0;
  if (!text.trim() && !hasAttachments) return null;
  return {
    id: `${sender}:${envelope.timestamp}`,
    sender,
    ...(envelope.sourceName ? { senderName: envelope.sourceName } : {}),
    chat: group ? `${GROUP_PREFIX}${group.groupId}` : sender,
    text,
    hasAttachments,
    timestamp: envelope.timestamp,
  };
}

/** Where a target's messages go on Signal: a group (`group.<id>`) or a number. */
export function recipientOf(target: ChannelTarget): SignalRecipient {
  return target.chat.startsWith(GROUP_PREFIX)
    ? { kind: 'group', groupId: target.chat.slice(GROUP_PREFIX.length) }
    : { kind: 'number', number: target.chat };
}

/**
 * The quote a reply carries: the author and timestamp of the message it answers (an inbound id `<sender>:<ts>`, or
 * `<account>:<sender>:<ts>` for a named account's).
 */
export function quoteOf(replyTo: string | undefined): { quoteAuthor: string; quoteTimestamp: number } | undefined {
  const match = /^(?:[^:\s]+:)?([^:\s]+):(\d+)$/.exec(replyTo?.trim() ?? '');
  if (!match) return undefined;
  return { quoteAuthor: match[1] as string, quoteTimestamp: Number(match[2]) };
}

/** The config key that lists the allowed numbers of an account (`channels.signal.allowedNumbers` for the default). */
export function allowedNumbersKey(account: string | undefined): string {
  return accountKey('signal', account, 'allowedNumbers');
}

/** The reply a sender not on the allow-list gets: their number (or service id) and the key that adds it. */
export function refusalText(sender: string, account: string | undefined): string {
  return (
    `⛔ You are not allowed to use this bot.\n` +
    `Your Signal ${sender.startsWith('+') ? 'number' : 'id'} is ${sender}. ` +
    `To get access, the bot's owner must add it to ${allowedNumbersKey(account)}.`
  );
}

/** The reply an allowed sender gets for a message with attachments but no text. */
export const TEXT_ONLY_TEXT = 'Only text messages are supported; please send your request as text.';

/** The reply when a message could not be handed to the engine after every attempt. */
export const NOT_ACCEPTED_TEXT =
  '⚠️ Your last message could not be accepted because of an internal error. Please send it again.';

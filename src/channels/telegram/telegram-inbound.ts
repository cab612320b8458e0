// Telegram updates → InboundMessages, and the replies the connector itself gives (strangers, non-text messages).
import type { Bot } from 'grammy';
import type { ChannelTarget, InboundMessage } from '../connector.ts';

/** One update from getUpdates. */
export type TelegramUpdate = Parameters<Bot['handleUpdate']>[0];
/** One message inside an update. */
export type TelegramMessage = NonNullable<TelegramUpdate['message']>;

/** Where replies to `message` go: its chat, and its forum topic when it was posted in one. */
export function targetOf(message: TelegramMessage): ChannelTarget {
  const target: ChannelTarget = { channel: 'telegram', chat: String(message.chat.id) };
  if (message.is_topic_message && message.message_thread_id !== undefined)
    target.thread = String(message.message_thread_id);
  return target;
}

/** The connector-unique id of a message: `<chat>:<message_id>` (stable when Telegram delivers the update again). */
export function inboundId(message: TelegramMessage): string {
  return `${message.chat.id}:${message.message_id}`;
}

/** Converts a text message from a person into an InboundMessage; null when it has no sender or no text. */
export function toInbound(message: TelegramMessage): InboundMessage | null {
  if (!message.from || typeof message.text !== 'string') return null;
  const userName =
    message.from.username ?? ([message.from.first_name, message.from.last_name].filter(Boolean).join(' ') || undefined);
  return {
    id: inboundId(message),
    target: targetOf(message),
    userId: String(message.from.id),
    ...(userName ? { userName } : {}),
    text: message.text,
    receivedAt: message.date * 1000,
  };
}

/** The Telegram message id an OutboundMessage.replyTo names (`<chat>:<id>` or a bare id), if it belongs to `chat`. */
export function replyMessageId(replyTo: string | undefined, chat: string): number | undefined {
  if (!replyTo) return undefined;
  const match = /^(?:(-?\d+):)?(\d+)$/.exec(replyTo.trim());
  if (!match || (match[1] !== undefined && match[1] !== chat)) return undefined;
  return Number(match[2]);
}

/** The reply a user not on the allow-list gets. */
export function refusalText(userId: number): string {
  return (
    `⛔ You are not allowed to use this bot.\n` +
    `Your Telegram user id is ${userId}. To get access, the bot's owner must add it to channels.telegram.allowedUserIds.`
  );
}

/** The reply an allowed user gets for a message without text (photo, sticker, …). */
export const TEXT_ONLY_TEXT = 'Only text messages are supported; please send your request as text.';

/** The reply when a message could not be handed to the engine after every attempt. */
export function notAcceptedText(): string {
  return '⚠️ Your last message could not be accepted because of an internal error. Please send it again.';
}

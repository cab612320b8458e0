// Telegram updates → InboundMessages (typed messages, and button presses as the command the button stands for), and the
// replies the connector itself gives (strangers, non-text messages).
import type { Bot } from 'grammy';
import type { ChannelTarget, InboundMessage } from '../connector.ts';
import { telegramKey } from './telegram-keys.ts';

/** One update from getUpdates. */
export type TelegramUpdate = Parameters<Bot['handleUpdate']>[0];
/** One message inside an update. */
export type TelegramMessage = NonNullable<TelegramUpdate['message']>;
/** A button press inside an update. */
export type TelegramCallbackQuery = NonNullable<TelegramUpdate['callback_query']>;

type TelegramUser = NonNullable<TelegramMessage['from']>;

/** Where replies to `message` go: its chat, and its forum topic when it was posted in one. */
export function targetOf(message: {
  chat: { id: number };
  is_topic_message?: boolean;
  message_thread_id?: number;
}): ChannelTarget {
  const target: ChannelTarget = { channel: 'telegram', chat: String(message.chat.id) };
  if (message.is_topic_message && message.message_thread_id !== undefined)
    target.thread = String(message.message_thread_id);
  return target;
}

/** The connector-unique id of a message: `<chat>:<message_id>` (stable when Telegram delivers the update again). */
export function inboundId(message: TelegramMessage): string {
  return `${message.chat.id}:${message.message_id}`;
}

/**
 * True when `text` is a command addressed to another bot (`/claude_kill@other_bot x`): in a group where the bot sees
 * every message (privacy mode off, or an admin), such a command is for that bot, and this one must neither run it nor
 * answer it. False for plain text, a bare `/command`, one addressed to `botUsername` (any case), or when the bot's own
 * username is not known.
 */
export function addressedElsewhere(text: string | undefined, botUsername: string | undefined): boolean {
  if (text === undefined || botUsername === undefined) return false;
  const to = /^\/[A-Za-z0-9_]+@([A-Za-z0-9_]+)/.exec(text.trimStart())?.[1];
  return to !== undefined && to.toLowerCase() !== botUsername.toLowerCase();
}

/** Converts a text message from a person into an InboundMessage; null when it has no sender or no text. */
export function toInbound(message: TelegramMessage): InboundMessage | null {
  if (!message.from || typeof message.text !== 'string') return null;
  const userName = userNameOf(message.from);
  return {
    id: inboundId(message),
    target: targetOf(message),
    userId: String(message.from.id),
    ...(userName ? { userName } : {}),
    text: message.text,
    receivedAt: message.date * 1000,
  };
}

/**
 * Converts a press of one of the bot's buttons into an InboundMessage: `text` is the button's command (its
 * callback_data), `pressed` is set, the target is the chat (and topic) of the message pressed, and the id
 * `<chat>:<message_id>:press:<query id>` is unique per press and stable when Telegram delivers the update again. Null
 * for a press without data or without a message (inline mode). `receivedAt` comes from the caller's clock.
 */
export function pressToInbound(query: TelegramCallbackQuery, receivedAt: number): InboundMessage | null {
  const message = query.message;
  if (!message || typeof query.data !== 'string' || query.data === '') return null;
  const userName = userNameOf(query.from);
  return {
    id: `${message.chat.id}:${message.message_id}:press:${query.id}`,
    target: targetOf(message),
    userId: String(query.from.id),
    ...(userName ? { userName } : {}),
    text: query.data,
    receivedAt,
    pressed: true,
  };
}

function userNameOf(user: TelegramUser): string | undefined {
  return user.username ?? ([user.first_name, user.last_name].filter(Boolean).join(' ') || undefined);
}

/**
 * The Telegram message id an OutboundMessage.replyTo names (`<chat>:<id>`, a bare id, or a press's id, which names the
 * message pressed), if it belongs to `chat`.
 */
export function replyMessageId(replyTo: string | undefined, chat: string): number | undefined {
  if (!replyTo) return undefined;
  const match = /^(?:(-?\d+):)?(\d+)(?::press:\S+)?$/.exec(replyTo.trim());
  if (!match || (match[1] !== undefined && match[1] !== chat)) return undefined;
  return Number(match[2]);
}

/** The reply a user not on the allow-list gets. */
export function refusalText(userId: number, account?: string): string {
  return (
    `⛔ You are not allowed to use this bot.\n` +
    `Your Telegram user id is ${userId}. To get access, the bot's owner must add it to ${telegramKey(account, 'allowedUserIds')}.`
  );
}

/** The answer to a button pressed by a user not on the allow-list (a callback answer holds at most 200 characters). */
export function pressRefusalText(userId: number, account?: string): string {
  return `⛔ You are not allowed to use this bot. Your Telegram user id is ${userId}; the bot's owner can add it to ${telegramKey(account, 'allowedUserIds')}.`;
}

/** The reply an allowed user gets for a message without text (photo, sticker, …). */
export const TEXT_ONLY_TEXT = 'Only text messages are supported; please send your request as text.';

/** The reply when a message could not be handed to the engine after every attempt. */
export function notAcceptedText(): string {
  return '⚠️ Your last message could not be accepted because of an internal error. Please send it again.';
}

/** The answer when a button press could not be handed over after every attempt. */
export const PRESS_NOT_ACCEPTED_TEXT =
  '⚠️ Your press could not be accepted because of an internal error. Please press the button again.';

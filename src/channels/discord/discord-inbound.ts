// Discord events → InboundMessages: typed messages (DMs, guild channels, threads), slash commands (as the command text
// they stand for) and button presses (as the button's command), and the texts the connector itself answers with.
import type { ButtonInteraction, ChatInputCommandInteraction, Message, User } from 'discord.js';
import { accountKey } from '../../core/config-accounts.ts';
import type { ChannelTarget, InboundMessage } from '../connector.ts';

/** The slash commands' one option: the rest of the command line. */
export const ARGS_OPTION = 'args';

/** What a connector knows about itself when converting. */
export interface InboundContext {
  account?: string;
  /** The bot's own user id (its mentions are taken out of the text). */
  botId: string;
  /** The id of the channel a thread was started in, or undefined when `channelId` is no thread. */
  threadParent(channelId: string): string | undefined;
  now(): number;
}

/** Where replies to something said in `channelId` go: the channel, or the thread and the channel it is in. */
export function targetIn(channelId: string, context: InboundContext): ChannelTarget {
  const parent = context.threadParent(channelId);
  const target: ChannelTarget = parent
    ? { channel: 'discord', chat: parent, thread: channelId }
    : { channel: 'discord', chat: channelId };
  if (context.account) target.account = context.account;
  return target;
}

function userNameOf(user: User): string {
  return user.globalName ?? user.username;
}

/** The text of a message with the bot's mentions (`<@id>`, `<@!id>`) taken out. */
export function messageText(content: string, botId: string): string {
  return content.replace(new RegExp(`<@!?${botId}>`, 'g'), ' ').trim();
}

/** A person's message as an InboundMessage; its id `<channel>:<message>` is unique and stable. */
export function messageToInbound(message: Message, context: InboundContext): InboundMessage {
  return {
    id: `${message.channelId}:${message.id}`,
    target: targetIn(message.channelId, context),
    userId: message.author.id,
    userName: userNameOf(message.author),
    text: messageText(message.content, context.botId),
    receivedAt: context.now(),
  };
}

/**
 * A slash command as the chat command it stands for (`/claude` + its `args` option), with the id
 * `<channel>:command:<interaction>`; the reply to it (`replyTo` = that id) fills the deferred response.
 */
export function commandToInbound(interaction: ChatInputCommandInteraction, context: InboundContext): InboundMessage {
  const args = interaction.options.getString(ARGS_OPTION)?.trim() ?? '';
  return {
    id: `${interaction.channelId}:command:${interaction.id}`,
    target: targetIn(interaction.channelId, context),
    userId: interaction.user.id,
    userName: userNameOf(interaction.user),
    text: args ? `/${interaction.commandName} ${args}` : `/${interaction.commandName}`,
    receivedAt: context.now(),
  };
}

/**
 * A button press as the button's command (`custom_id`), `pressed` set, with the id
 * `<channel>:<message pressed>:press:<interaction>`; a reply to it answers the message pressed.
 */
export function pressToInbound(interaction: ButtonInteraction, context: InboundContext): InboundMessage {
  return {
    id: `${interaction.channelId}:${interaction.message.id}:press:${interaction.id}`,
    target: targetIn(interaction.channelId, context),
    userId: interaction.user.id,
    userName: userNameOf(interaction.user),
    text: interaction.customId,
    receivedAt: context.now(),
    pressed: true,
  };
}

/** What an OutboundMessage.replyTo names: a message (typed or pressed) in a channel, or a slash command. */
export type ReplyRef =
  | { kind: 'message'; channelId: string; messageId: string }
  | { kind: 'command'; channelId: string; interactionId: string };

/** Parses a `replyTo` made from an inbound id; undefined for anything else. */
export function parseReplyTo(replyTo: string | undefined): ReplyRef | undefined {
  const m = /^(\d+):(?:command:(\d+)|(\d+)(?::press:\d+)?)$/.exec(replyTo?.trim() ?? '');
  if (!m) return undefined;
  const channelId = m[1] as string;
  return m[2] !== undefined
    ? { kind: 'command', channelId, interactionId: m[2] }
    : { kind: 'message', channelId, messageId: m[3] as string };
}

/** The config key that lists a connector's allowed users. */
export function allowListKey(account: string | undefined): string {
  return accountKey('discord', account, 'allowedUserIds');
}

/** The reply a person not on the allow-list gets (at most 2,000 characters). */
export function refusalText(userId: string, account: string | undefined): string {
  return (
    `⛔ You are not allowed to use this bot.\n` +
    `Your Discord user id is ${userId}. To get access, the bot's owner must add it to ${allowListKey(account)}.`
  );
}

/** The reply an allowed person gets for a message without text (an attachment, a sticker). */
export const TEXT_ONLY_TEXT = 'Only text messages are supported; please send your request as text.';

/** The reply when a message could not be handed over after every attempt. */
export const NOT_ACCEPTED_TEXT =
  '⚠️ Your last message could not be accepted because of an internal error. Please send it again.';

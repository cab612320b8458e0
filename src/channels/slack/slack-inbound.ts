// What reaches the Slack connector, validated and turned into InboundMessages: a message in a DM (`message.im`) or a
// mention of the app in a channel (`app_mention`), the one slash command (`/switchboard <command> …` → `/<command> …`),
// and a press of one of the connector's Block Kit buttons (`block_actions` → the button's value as a pressed command).
// Also the replies the connector gives itself (strangers, channels not listened to, intake failures).
import { z } from 'zod';
import type { ChannelTarget, InboundMessage } from '../connector.ts';
import { ACTION_PREFIX } from './slack-blocks.ts';
import { slackConfigKey } from './slack-credentials.ts';

/** A message or app_mention event, as far as the connector reads it. */
export const slackMessageEventSchema = z.looseObject({
  type: z.enum(['message', 'app_mention']),
  subtype: z.string().optional(),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  user: z.string().min(1).optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
});
export type SlackMessageEvent = z.infer<typeof slackMessageEventSchema>;

/** A slash command's payload. */
export const slackCommandSchema = z.looseObject({
  command: z.string().min(1),
  text: z.string().default(''),
  user_id: z.string().min(1),
  user_name: z.string().optional(),
  channel_id: z.string().min(1),
  trigger_id: z.string().min(1),
});
export type SlackCommand = z.infer<typeof slackCommandSchema>;

/** A block_actions payload (a button pressed). */
export const slackBlockActionsSchema = z.looseObject({
  type: z.literal('block_actions'),
  user: z.looseObject({ id: z.string().min(1), username: z.string().optional(), name: z.string().optional() }),
  channel: z.looseObject({ id: z.string().min(1) }).optional(),
  container: z.looseObject({ channel_id: z.string().optional(), message_ts: z.string().optional() }).optional(),
  message: z.looseObject({ ts: z.string().min(1), thread_ts: z.string().optional() }).optional(),
  actions: z.array(
    z.looseObject({
      action_id: z.string(),
      value: z.string().optional(),
      action_ts: z.string().optional(),
    }),
  ),
});
export type SlackBlockActions = z.infer<typeof slackBlockActionsSchema>;

/** Where an inbound message came from and its replies go: the conversation, and the thread when it was in one. */
export function slackTarget(account: string | undefined, chat: string, ts?: string, threadTs?: string): ChannelTarget {
  return {
    channel: 'slack',
    ...(account ? { account } : {}),
    chat,
    ...(threadTs && threadTs !== ts ? { thread: threadTs } : {}),
  };
}

/**
 * Slack's text as a person typed it: the app's own mention removed from the start, `<@U1>` as `@U1`, `<#C1|general>` as
 * `#general`, links as their URL, and `&amp;` `&lt;` `&gt;` unescaped.
 */
export function plainText(text: string, botUserId: string | undefined): string {
  let out = text;
  if (botUserId) out = out.replace(new RegExp(`^\\s*<@${botUserId}(?:\\|[^>]*)?>[\\s:,]*`), '');
  out = out
    .replace(/<@([A-Z0-9]+)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<#([A-Z0-9]+)\|([^>]*)>/g, '#$2')
    .replace(/<#([A-Z0-9]+)>/g, '#$1')
    .replace(/<(?:mailto:)?([^|>]+)\|[^>]*>/g, '$1')
    .replace(/<([^>]+)>/g, '$1');
  return out.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&').trim();
}

/** True for an event the connector listens to: a person's plain message in a DM, or a mention of the app anywhere. */
export function isConversational(event: SlackMessageEvent): boolean {
  if (!event.user || event.bot_id) return false;
  if (event.type === 'app_mention') return true;
  return event.channel_type === 'im' && (event.subtype === undefined || event.subtype === 'file_share');
}

/**
 * A message or mention as an InboundMessage. Its id `<channel>:<ts>` is the same for the message and for a mention of
 * the same message (so a mention in a DM counted twice is accepted once) and on every redelivery.
 */
export function eventToInbound(
  event: SlackMessageEvent,
  account: string | undefined,
  botUserId: string | undefined,
  receivedAt: number,
): InboundMessage {
  return {
    id: `${event.channel}:${event.ts}`,
    target: slackTarget(account, event.channel, event.ts, event.thread_ts),
    userId: event.user ?? '',
    text: plainText(event.text ?? '', botUserId),
    receivedAt,
  };
}

/**
 * The slash command `/switchboard <command> <args>` as the chat command `/<command> <args>` (a leading `/` of the
 * command is accepted too). Null for the bare `/switchboard` and `/switchboard help` (answered with the commands).
 * Its id names the command's trigger, unique per use.
 */
export function commandToInbound(
  command: SlackCommand,
  account: string | undefined,
  receivedAt: number,
): InboundMessage | null {
  const rest = command.text.trim().replace(/^\/+/, '');
  if (rest === '' || rest === 'help') return null;
  return {
    id: `command:${command.trigger_id}`,
    target: slackTarget(account, command.channel_id),
    userId: command.user_id,
    ...(command.user_name ? { userName: command.user_name } : {}),
    text: `/${rest}`,
    receivedAt,
  };
}

/**
 * A press of one of the connector's buttons as a pressed InboundMessage: `text` is the button's value (its command),
 * the target the pressed message's conversation and thread, the id `<channel>:<message ts>:press:<action ts>`. Null
 * when the payload names no button of the connector's, or no conversation.
 */
export function pressToInbound(
  payload: SlackBlockActions,
  account: string | undefined,
  receivedAt: number,
): InboundMessage | null {
  const action = payload.actions.find((a) => a.action_id.startsWith(ACTION_PREFIX) && a.value);
  const chat = payload.channel?.id ?? payload.container?.channel_id;
  const ts = payload.message?.ts ?? payload.container?.message_ts;
  if (!action?.value || !chat || !ts) return null;
  const userName = payload.user.username ?? payload.user.name;
  return {
    id: `${chat}:${ts}:press:${action.action_ts ?? action.action_id}`,
    target: slackTarget(account, chat, ts, payload.message?.thread_ts),
    userId: payload.user.id,
    ...(userName ? { userName } : {}),
    text: action.value,
    receivedAt,
    pressed: true,
  };
}

/** The reply a person not on the allow-list gets: their id and the key that adds it. */
export function refusalText(userId: string, account: string | undefined): string {
  return (
    `⛔ You are not allowed to use this app.\n` +
    `Your Slack user id is ${userId}. To get access, the app's owner must add it to ${slackConfigKey(account)}.allowedUserIds.`
  );
}

/** The reply in a channel the connector does not listen to. */
export function channelRefusalText(channel: string, account: string | undefined): string {
  return `⛔ This app does not listen in this channel (${channel}). The app's owner can add it to ${slackConfigKey(account)}.allowedChannels.`;
}

/** The reply when a message or press could not be handed over (the person should send it again). */
export const NOT_ACCEPTED_TEXT =
  '⚠️ Your last message could not be accepted because of an internal error. Please send it again.';

/** The answer to a bare slash command: how to use it, and the commands it takes. */
export function commandHelpText(slash: string, commands: readonly { command: string; description: string }[]): string {
  const lines = commands.map((c) => `• \`${slash} ${c.command.replace(/^\//, '')}\` — ${c.description}`);
  return [`Use \`${slash} <command> …\`, or send the command as a message (\`/claude …\`).`, ...lines].join('\n');
}

// The payloads the fake Slack delivers, shaped like Slack's: an event_callback around a message or app_mention event,
// a slash command, a block_actions interaction; and the signed HTTP posting of any of them (Events API mode).
import { slackSignature } from '../../src/channels/slack/slack-signature.ts';

export const FAKE_TEAM = 'TFAKE';
export const FAKE_APP = 'AFAKE';

/** A person's message or mention to push. */
export interface PushedSlackMessage {
  user: string;
  text: string;
  /** Default: the user's DM with the app, `D<user>`. */
  channel?: string;
  /** The ts of the thread's parent when the message is a reply in a thread. */
  threadTs?: string;
}

/** An event_callback body around `event`. */
export function eventCallback(event: Record<string, unknown>, eventId: string): Record<string, unknown> {
  return {
    token: 'verification-token-unused',
    team_id: FAKE_TEAM,
    api_app_id: FAKE_APP,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: FAKE_TEAM, user_id: 'UBOT', is_bot: true }],
  };
}

/** A `message` event in a DM (channel_type im) or a channel. */
export function messageEvent(message: PushedSlackMessage, ts: string): Record<string, unknown> {
  const channel = message.channel ?? `D${message.user}`;
  return {
    type: 'message',
    channel,
    channel_type: channel.startsWith('D') ? 'im' : 'channel',
    user: message.user,
    text: message.text,
    ts,
    event_ts: ts,
    team: FAKE_TEAM,
    ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
  };
}

/** An `app_mention` event: the text starts with the app's mention. */
export function mentionEvent(message: PushedSlackMessage, ts: string, botUserId: string): Record<string, unknown> {
  return {
    type: 'app_mention',
    channel: message.channel ?? 'CGENERAL',
    user: message.user,
    text: `<@${botUserId}> ${message.text}`,
    ts,
    event_ts: ts,
    team: FAKE_TEAM,
    ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
  };
}

/** A slash command's payload. */
export function commandPayload(
  command: string,
  user: string,
  text: string,
  channel: string,
  triggerId: string,
): Record<string, string> {
  return {
    token: 'verification-token-unused',
    team_id: FAKE_TEAM,
    team_domain: 'fake',
    channel_id: channel,
    channel_name: channel.startsWith('D') ? 'directmessage' : 'general',
    user_id: user,
    user_name: user.toLowerCase(),
    command,
    text,
    api_app_id: FAKE_APP,
    response_url: 'http://127.0.0.1:9/unused',
    trigger_id: triggerId,
  };
}

/** A press of the button `value` (action `actionId`) under message `messageTs` in `channel`. */
export function blockActionsPayload(press: {
  user: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
  actionId: string;
  value: string;
  actionTs: string;
  triggerId: string;
}): Record<string, unknown> {
  return {
    type: 'block_actions',
    team: { id: FAKE_TEAM, domain: 'fake' },
    user: { id: press.user, username: press.user.toLowerCase(), name: press.user.toLowerCase(), team_id: FAKE_TEAM },
    api_app_id: FAKE_APP,
    token: 'verification-token-unused',
    container: { type: 'message', message_ts: press.messageTs, channel_id: press.channel, is_ephemeral: false },
    trigger_id: press.triggerId,
    channel: { id: press.channel, name: 'chat' },
    message: { type: 'message', ts: press.messageTs, ...(press.threadTs ? { thread_ts: press.threadTs } : {}) },
    response_url: 'http://127.0.0.1:9/unused',
    actions: [
      {
        action_id: press.actionId,
        block_id: 'switchboard:row-0',
        value: press.value,
        type: 'button',
        action_ts: press.actionTs,
        text: { type: 'plain_text', text: 'x' },
      },
    ],
  };
}

/** How to sign a posted request; defaults to a valid signature at the current time. */
export interface SigningOptions {
  /** Seconds since the epoch. */
  timestamp?: number;
  /** A signature header to send instead of the right one. */
  signature?: string;
  /** Sent as X-Slack-Retry-Num. */
  retryNum?: number;
}

/** A request body as Slack posts it: JSON for events, a form for commands, `payload=<json>` for interactivity. */
export type SlackPost =
  | { kind: 'event'; body: Record<string, unknown> }
  | { kind: 'command'; body: Record<string, string> }
  | { kind: 'interactive'; body: Record<string, unknown> };

/** The raw bytes and content type of a post. */
export function encodePost(post: SlackPost): { raw: string; contentType: string } {
  if (post.kind === 'event') return { raw: JSON.stringify(post.body), contentType: 'application/json' };
  if (post.kind === 'command')
    return { raw: new URLSearchParams(post.body).toString(), contentType: 'application/x-www-form-urlencoded' };
  return {
    raw: new URLSearchParams({ payload: JSON.stringify(post.body) }).toString(),
    contentType: 'application/x-www-form-urlencoded',
  };
}

/** Posts `post` to `url` signed with `secret` like Slack does; returns the status and body text. */
export async function postSigned(
  url: string,
  secret: string,
  post: SlackPost,
  options: SigningOptions = {},
): Promise<{ status: number; body: string; signature: string; timestamp: number }> {
  const { raw, contentType } = encodePost(post);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = options.signature ?? slackSignature(secret, timestamp, raw);
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
      ...(options.retryNum !== undefined ? { 'x-slack-retry-num': String(options.retryNum) } : {}),
    },
    body: raw,
  });
  return { status: response.status, body: await response.text(), signature, timestamp };
}

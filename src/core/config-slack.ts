// Config section of the Slack connector (`channels.slack`): Socket Mode by default, or the Events API over HTTP.
import { z } from 'zod';
import { channelWithAccounts } from './config-accounts.ts';

/** `channels.slack`: one workspace's app, or several under `accounts`. */
export const slackChannelSchema = channelWithAccounts({
  /** `socket`: Socket Mode over a WebSocket (no public URL; needs `appToken`); `http`: Events API at POST /slack/events. */
  mode: z.enum(['socket', 'http']).default('socket'),
  /** The bot token (xoxb-…) itself; prefer `botTokenEnv`. */
  botToken: z.string().min(1).optional(),
  botTokenEnv: z.string().min(1).default('SLACK_BOT_TOKEN'),
  /** The app-level token (xapp-…) Socket Mode connects with; prefer `appTokenEnv`. */
  appToken: z.string().min(1).optional(),
  appTokenEnv: z.string().min(1).default('SLACK_APP_TOKEN'),
  /** The signing secret HTTP requests are verified with (http mode); prefer `signingSecretEnv`. */
  signingSecret: z.string().min(1).optional(),
  signingSecretEnv: z.string().min(1).default('SLACK_SIGNING_SECRET'),
  /** The Web API base (default Slack's; tests point it at a fake). */
  apiUrl: z.url().optional(),
  /** Slack user ids (U…) allowed to talk to the app; everyone else is refused. */
  allowedUserIds: z.array(z.string().min(1)).default([]),
  /** When not empty, only these channels (C…/G…; DMs always count) are listened to. */
  allowedChannels: z.array(z.string().min(1)).default([]),
});

export type SlackChannelConfig = z.infer<typeof slackChannelSchema>;

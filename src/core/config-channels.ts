// Config section of the chat channels (web page, Telegram, Slack, Discord, Signal) and of outbound delivery.
import { z } from 'zod';
import { channelWithAccounts } from './config-accounts.ts';
import { discordChannelSchema } from './config-discord.ts';
import { signalChannelSchema } from './config-signal.ts';
import { slackChannelSchema } from './config-slack.ts';

const positiveMs = z.number().int().positive();

export const webChannelSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /**
   * Ask for the gateway token (a login form) even from this machine. Always asked when `gateway.allowRemote` is set.
   * Set it when a reverse proxy on this machine forwards outside clients to the gateway.
   */
  requireLogin: z.boolean().default(false),
  /** How long the page's login cookie lasts, in hours. */
  cookieMaxAgeHours: z.number().int().positive().default(720),
  /** Mark the cookie `Secure`: only when the page is reached over HTTPS (e.g. behind a TLS proxy). */
  secureCookie: z.boolean().default(false),
  /** Longest text of one chat message, both ways (longer outbound text is split by the outbox). */
  maxMessageLength: z.number().int().positive().default(32_000),
  /** Messages a newly opened page receives from its chat's transcript. */
  historyLimit: z.number().int().positive().default(500),
  /** Messages kept per chat transcript; older ones are deleted. */
  transcriptMaxMessages: z.number().int().positive().default(5_000),
  /** A comment line is sent on idle event streams this often, so proxies and browsers keep them open. */
  keepAliveMs: positiveMs.default(15_000),
  /** How often the page refreshes the list of coding sessions. */
  sessionsRefreshMs: positiveMs.default(5_000),
});

/** `channels.telegram`: one bot, or several under `accounts` (a work and a personal bot). */
export const telegramChannelSchema = channelWithAccounts({
  /** The bot token itself; prefer `botTokenEnv`. */
  botToken: z.string().min(1).optional(),
  /** Name of the environment variable holding the bot token (default TELEGRAM_BOT_TOKEN). */
  botTokenEnv: z.string().min(1).default('TELEGRAM_BOT_TOKEN'),
  /** Telegram user ids allowed to talk to the bot; everyone else is refused. */
  allowedUserIds: z.array(z.number().int()).default([]),
  /** Bot API root (tests point it at a local fake). */
  apiRoot: z.url().optional(),
  /** Long-polling timeout of one getUpdates call, in seconds (Telegram allows up to 50). */
  pollTimeoutSeconds: z.number().int().min(0).max(50).default(30),
  /** A Bot API call (beyond the long-poll wait itself) that takes longer than this is abandoned and counts as failed. */
  requestTimeoutSeconds: z.number().int().positive().default(30),
  /** On stop, the call confirming the handled updates is given at most this long. */
  shutdownTimeoutMs: positiveMs.default(5_000),
  /** First wait after a failed getUpdates call or a failed inbound hand-off; doubles up to `retryMaxDelayMs`. */
  retryBaseDelayMs: positiveMs.default(1_000),
  /** Longest wait between retries of getUpdates or of an inbound hand-off. */
  retryMaxDelayMs: positiveMs.default(60_000),
  /**
   * Attempts at handing one inbound message to the engine before the sender is told it could not be accepted and the
   * update is confirmed (so one poisoned message cannot block the chat forever).
   */
  inboundMaxAttempts: z.number().int().positive().default(5),
  /** `markdown`: send MarkdownV2 (code, bold kept; falls back to plain text if Telegram refuses); `plain`: text only. */
  format: z.enum(['markdown', 'plain']).default('markdown'),
});

export const outboxSchema = z.strictObject({
  /** First retry delay of a failed delivery; doubles on each further failure (with jitter). */
  baseDelayMs: positiveMs.default(1_000),
  /** Longest delay between two attempts (a server's retry-after may ask for more and is honoured). */
  maxDelayMs: positiveMs.default(300_000),
  /** Failed attempts (without progress) after which a message is marked failed (dead letter). */
  maxAttempts: z.number().int().positive().default(10),
  /** One connector send that takes longer than this counts as a failed attempt. */
  sendTimeoutMs: positiveMs.default(30_000),
  /** Dead letters older than this are deleted from the store. */
  deadLetterRetentionMs: positiveMs.default(30 * 24 * 3_600_000),
});

export const channelsSchema = z.strictObject({
  web: webChannelSchema.prefault({}),
  telegram: telegramChannelSchema.prefault({}),
  slack: slackChannelSchema.prefault({}),
  discord: discordChannelSchema.prefault({}),
  signal: signalChannelSchema.prefault({}),
  outbox: outboxSchema.prefault({}),
});

export type WebChannelConfig = z.infer<typeof webChannelSchema>;
export type TelegramChannelConfig = z.infer<typeof telegramChannelSchema>;
/** The settings of one Telegram bot (an account of the section, or the section itself). */
export type TelegramAccountConfig = Omit<TelegramChannelConfig, 'accounts'>;
export type OutboxConfig = z.infer<typeof outboxSchema>;

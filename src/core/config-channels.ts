// Config section of the chat channels (web page, Telegram) and of outbound delivery.
import { z } from 'zod';

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
  keepAliveMs: z.number().int().positive().default(15_000),
  /** How often the page refreshes the list of coding sessions. */
  sessionsRefreshMs: z.number().int().positive().default(5_000),
});

export const telegramChannelSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** The bot token itself; prefer `botTokenEnv`. */
  botToken: z.string().min(1).optional(),
  /** Name of the environment variable holding the bot token (default TELEGRAM_BOT_TOKEN). */
  botTokenEnv: z.string().min(1).default('TELEGRAM_BOT_TOKEN'),
  /** Telegram user ids allowed to talk to the bot; everyone else is refused. */
  allowedUserIds: z.array(z.number().int()).default([]),
  /** Bot API root (tests point it at a local fake). */
  apiRoot: z.url().optional(),
});

export const channelsSchema = z.strictObject({
  web: webChannelSchema.prefault({}),
  telegram: telegramChannelSchema.prefault({}),
});

export type WebChannelConfig = z.infer<typeof webChannelSchema>;

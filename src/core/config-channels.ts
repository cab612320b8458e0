// Config section of the chat channels (web page, Telegram) and of outbound delivery.
import { z } from 'zod';

export const webChannelSchema = z.strictObject({
  enabled: z.boolean().default(true),
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

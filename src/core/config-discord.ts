// Config section of the Discord connector (`channels.discord`).
import { z } from 'zod';
import { channelWithAccounts } from './config-accounts.ts';

/** `channels.discord`: one bot, or several under `accounts`. */
export const discordChannelSchema = channelWithAccounts({
  /** The bot token itself; prefer `tokenEnv`. */
  token: z.string().min(1).optional(),
  tokenEnv: z.string().min(1).default('DISCORD_BOT_TOKEN'),
  /** The application id the slash commands are registered for. */
  applicationId: z.string().min(1).optional(),
  /** Guilds whose slash commands are registered (guild commands appear at once; global ones take up to an hour). */
  guildIds: z.array(z.string().min(1)).default([]),
  /** Discord user ids allowed to talk to the bot; everyone else is refused. */
  allowedUserIds: z.array(z.string().min(1)).default([]),
  /** When not empty, only these guild channels (DMs always count) are listened to. */
  allowedChannels: z.array(z.string().min(1)).default([]),
  /** The REST API base, e.g. https://discord.com/api (tests point it at a fake); discord.js appends /v10. */
  apiUrl: z.url().optional(),
  /** The Gateway WebSocket URL, over the one GET /gateway/bot names (only needed when that one is not reachable). */
  gatewayUrl: z.url().optional(),
});

export type DiscordChannelConfig = z.infer<typeof discordChannelSchema>;

/** One Discord bot's settings: the section's own, or an `accounts` entry over them (see `accountsOf`). */
export type DiscordAccountConfig = Omit<DiscordChannelConfig, 'accounts'>;

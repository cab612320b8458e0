// Builds the Discord connectors of `channels.discord`: one per account (`accounts.<name>`, or the section itself as
// the only, default account), each with its own bot token.
import type { Clock } from '../../core/clock.ts';
import { accountKey, accountsOf } from '../../core/config-accounts.ts';
import type { DiscordAccountConfig, DiscordChannelConfig } from '../../core/config-discord.ts';
import { invalidInput } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DiscordCommandSpec } from './discord-commands.ts';
import { DiscordConnector } from './discord-connector.ts';

/** What `createDiscordConnectors` needs (built with the other connectors in chat-connectors.ts). */
export interface DiscordDeps {
  clock: Clock;
  logger: Logger;
  /** Where `tokenEnv` is looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The seed's chat commands, registered as slash commands. */
  commands?: readonly DiscordCommandSpec[];
}

/** The config key prefix of an account: `channels.discord` or `channels.discord.accounts.<name>`. */
export function discordKey(account: string | undefined): string {
  return accountKey('discord', account);
}

/**
 * The bot token of an account: `token`, else the environment variable named by `tokenEnv`. Throws an invalid_input
 * error naming both keys when there is none; the token itself never appears in an error.
 */
export function resolveDiscordToken(
  config: DiscordAccountConfig,
  account: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const token = config.token?.trim() || env[config.tokenEnv]?.trim();
  if (!token) {
    const key = discordKey(account);
    throw invalidInput(
      `${key} is enabled but has no bot token: set ${key}.token, or the environment variable ${config.tokenEnv} ` +
        `(named by ${key}.tokenEnv)`,
      `${key}.token`,
    );
  }
  return token;
}

/**
 * One connector per configured Discord account (call it only when the channel is enabled). Throws an invalid_input
 * error naming the account's `token` key when one has no token. Register each on the Outbox and `start` it.
 */
export function createDiscordConnectors(section: DiscordChannelConfig, deps: DiscordDeps): DiscordConnector[] {
  return accountsOf(section).map(({ account, config }) => {
    const token = resolveDiscordToken(config, account, deps.env);
    return new DiscordConnector(
      config,
      token,
      { clock: deps.clock, logger: deps.logger, ...(deps.commands ? { commands: deps.commands } : {}) },
      account,
    );
  });
}

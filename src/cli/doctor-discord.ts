import { discordKey, resolveDiscordToken } from '../channels/discord/discord-connectors.ts';
import type { Config } from '../core/config.ts';
import { accountsOf } from '../core/config-accounts.ts';
import { errorMessage } from '../core/errors.ts';
import type { Check } from './doctor.ts';

/**
 * One check per Discord bot when the channel is enabled: its token is there (a failure otherwise), someone may talk to
 * it and its slash commands can be registered (warnings: no allowed user; guildIds without an applicationId is fine,
 * the id comes from the Gateway; no guildIds means the commands work only as typed messages).
 */
export function discordChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const section = config.channels.discord;
  if (!section.enabled) return [];
  return accountsOf(section).map(({ account, config: bot }): Check => {
    const label = account === undefined ? 'Discord' : `Discord (${account})`;
    try {
      resolveDiscordToken(bot, account, env);
    } catch (error) {
      return { status: 'fail', label, detail: errorMessage(error) };
    }
    const key = discordKey(account);
    if (bot.allowedUserIds.length === 0)
      return { status: 'warn', label, detail: `${key}.allowedUserIds is empty: the bot refuses everyone` };
    const commands =
      bot.guildIds.length > 0
        ? `slash commands in ${bot.guildIds.length} guild(s)`
        : `no ${key}.guildIds: commands only as typed messages`;
    return {
      status: bot.guildIds.length > 0 ? 'ok' : 'warn',
      label,
      detail: `bot token present; ${bot.allowedUserIds.length} allowed user(s); ${commands}`,
    };
  });
}

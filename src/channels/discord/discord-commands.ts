// The seed's chat commands as Discord application (slash) commands: one per command, each with one optional string
// option `args` (the rest of the command line, as typed after `/claude`). Registered per configured guild, where they
// appear at once (PUT /applications/{application}/guilds/{guild}/commands replaces the guild's list).
import type { REST } from 'discord.js';
import { Routes } from 'discord.js';
import type { Logger } from '../../core/logger.ts';
import { describeDiscordError } from './discord-errors.ts';
import { ARGS_OPTION } from './discord-inbound.ts';

/** One chat command, as the layer that handles commands describes it. */
export interface DiscordCommandSpec {
  /** With or without the leading slash, e.g. `claude`. */
  name: string;
  description: string;
  /** Its usage line, shown as the description of the `args` option. */
  usage?: string;
}

/** A command as Discord's API takes it (CHAT_INPUT, one optional STRING option). */
export interface ApplicationCommandBody {
  name: string;
  type: 1;
  description: string;
  options: { type: 3; name: string; description: string; required: false }[];
}

const NAME = /^[-_a-z0-9]{1,32}$/;
const MAX_COMMANDS = 100;

/** The command list Discord accepts: names normalized, descriptions cut to 100 characters; bad names are skipped. */
export function applicationCommands(specs: readonly DiscordCommandSpec[], logger: Logger): ApplicationCommandBody[] {
  const seen = new Set<string>();
  const out: ApplicationCommandBody[] = [];
  for (const spec of specs) {
    const name = spec.name.trim().replace(/^\//, '').toLowerCase();
    const description = spec.description.trim().slice(0, 100) || name;
    if (!NAME.test(name) || seen.has(name)) {
      logger.warn({ command: spec.name }, 'command left out of the Discord slash commands (1-32 of a-z, 0-9, - and _)');
      continue;
    }
    seen.add(name);
    const usage = (spec.usage?.replace(/^\/\S+\s*/, '').trim() || 'arguments, as after the command').slice(0, 100);
    out.push({
      name,
      type: 1,
      description,
      options: [{ type: 3, name: ARGS_OPTION, description: usage, required: false }],
    });
  }
  return out.slice(0, MAX_COMMANDS);
}

/**
 * Registers `commands` as the guild commands of `applicationId` in each guild; a guild that refuses is logged and
 * skipped (the commands still work as typed messages). Resolves to the guilds that took them.
 */
export async function registerCommands(
  rest: REST,
  applicationId: string,
  guildIds: readonly string[],
  commands: ApplicationCommandBody[],
  logger: Logger,
): Promise<string[]> {
  const done: string[] = [];
  for (const guildId of guildIds) {
    try {
      await rest.put(Routes.applicationGuildCommands(applicationId, guildId), { body: commands });
      done.push(guildId);
    } catch (error) {
      logger.warn({ guild: guildId, err: describeDiscordError(error) }, 'could not register the slash commands');
    }
  }
  return done;
}

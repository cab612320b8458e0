import type { Logger } from '../../core/logger.ts';

/** One entry of the bot's command menu, as the layer that handles commands describes it. */
export interface BotCommandSpec {
  /** With or without the leading slash, e.g. `claude` or `/claude`. */
  command: string;
  description: string;
}

const COMMAND = /^[a-z0-9_]{1,32}$/;

/**
 * Normalizes a command list for setMyCommands: leading `/` stripped, lower case, descriptions trimmed to Telegram's 256
 * characters; entries Telegram would refuse (bad name, empty description, duplicates) are skipped with a warning.
 */
export function botCommands(
  specs: readonly BotCommandSpec[],
  logger: Logger,
): { command: string; description: string }[] {
  const seen = new Set<string>();
  const out: { command: string; description: string }[] = [];
  for (const spec of specs) {
    const command = spec.command.trim().replace(/^\//, '').toLowerCase();
    const description = spec.description.trim().slice(0, 256);
    if (!COMMAND.test(command) || description === '' || seen.has(command)) {
      logger.warn(
        { command: spec.command },
        'command left out of the Telegram menu (1-32 of a-z, 0-9, _ and a description)',
      );
      continue;
    }
    seen.add(command);
    out.push({ command, description });
  }
  return out.slice(0, 100);
}

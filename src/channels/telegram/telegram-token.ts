import type { TelegramChannelConfig } from '../../core/config-channels.ts';
import { invalidInput } from '../../core/errors.ts';

const TOKEN_SHAPE = /^\d+:[A-Za-z0-9_-]+$/;

/**
 * Returns the bot token: `channels.telegram.botToken`, else the environment variable named by `botTokenEnv`. Throws an
 * invalid_input error naming both keys when there is none, or when it does not look like a bot token (`<id>:<secret>`).
 * The token itself never appears in the error.
 */
export function resolveBotToken(config: TelegramChannelConfig, env: NodeJS.ProcessEnv = process.env): string {
  const fromConfig = config.botToken?.trim();
  const fromEnv = env[config.botTokenEnv]?.trim();
  const token = fromConfig || fromEnv;
  const where = fromConfig ? 'channels.telegram.botToken' : `the environment variable ${config.botTokenEnv}`;
  if (!token) {
    throw invalidInput(
      `channels.telegram is enabled but has no bot token: set channels.telegram.botToken, or the environment variable ` +
        `${config.botTokenEnv} (named by channels.telegram.botTokenEnv)`,
      'channels.telegram.botToken',
    );
  }
  if (!TOKEN_SHAPE.test(token)) {
    throw invalidInput(
      `the Telegram bot token in ${where} does not look like a bot token (<bot id>:<secret>)`,
      'channels.telegram.botToken',
    );
  }
  return token;
}

/** Replaces every occurrence of `token` in `text` (an error message, a URL) with [redacted]. */
export function redactToken(text: string, token: string): string {
  return token ? text.split(token).join('[redacted]') : text;
}

import type { TelegramAccountConfig } from '../../core/config-channels.ts';
import { invalidInput } from '../../core/errors.ts';
import { telegramKey } from './telegram-keys.ts';

const TOKEN_SHAPE = /^\d+:[A-Za-z0-9_-]+$/;

/**
 * Returns the bot token of one bot (`account`: a named account): its `botToken`, else the environment variable named by `botTokenEnv`. Throws an
 * invalid_input error naming both keys when there is none, or when it does not look like a bot token (`<id>:<secret>`).
 * The token itself never appears in the error.
 */
export function resolveBotToken(
  config: TelegramAccountConfig,
  env: NodeJS.ProcessEnv = process.env,
  account?: string,
): string {
  const fromConfig = config.botToken?.trim();
  const fromEnv = env[config.botTokenEnv]?.trim();
  const token = fromConfig || fromEnv;
  const key = telegramKey(account, 'botToken');
  const where = fromConfig ? key : `the environment variable ${config.botTokenEnv}`;
  if (!token) {
    throw invalidInput(
      `${account === undefined ? 'channels.telegram' : `the Telegram account ${account}`} is enabled but has no bot ` +
        `token: set ${key}, or the environment variable ${config.botTokenEnv} (named by ${telegramKey(account, 'botTokenEnv')})`,
      key,
    );
  }
  if (!TOKEN_SHAPE.test(token)) {
    throw invalidInput(`the Telegram bot token in ${where} does not look like a bot token (<bot id>:<secret>)`, key);
  }
  return token;
}

/** Replaces every occurrence of `token` in `text` (an error message, a URL) with [redacted]. */
export function redactToken(text: string, token: string): string {
  return token ? text.split(token).join('[redacted]') : text;
}

import { accountKey } from '../../core/config-accounts.ts';

/**
 * The config key of a Telegram setting, as messages and errors name it: `channels.telegram.<field>` for the default bot,
 * `channels.telegram.accounts.<account>.<field>` for a named one.
 */
export function telegramKey(account: string | undefined, field: string): string {
  return accountKey('telegram', account, field);
}

// The secrets of one Slack account: the bot token (Web API), the app-level token (Socket Mode) and the signing secret
// (Events API over HTTP), each from the config or from the environment variable it names. Never logged.
import { accountKey } from '../../core/config-accounts.ts';
import type { SlackChannelConfig } from '../../core/config-slack.ts';
import { invalidInput } from '../../core/errors.ts';

/** One account's config as `accountsOf` gives it (the section without `accounts`). */
export type SlackAccountConfig = Omit<SlackChannelConfig, 'accounts'>;

/** The secrets an account runs with: `appToken` in socket mode, `signingSecret` in http mode. */
export interface SlackCredentials {
  botToken: string;
  appToken?: string;
  signingSecret?: string;
}

/** The config key prefix of an account: `channels.slack` or `channels.slack.accounts.<name>`. */
export function slackConfigKey(account: string | undefined): string {
  return accountKey('slack', account);
}

function pick(
  own: string | undefined,
  envName: string,
  env: NodeJS.ProcessEnv,
  what: string,
  key: string,
  field: string,
): string {
  const value = own?.trim() || env[envName]?.trim();
  if (!value) {
    throw invalidInput(
      `${key} is enabled but has no ${what}: set ${key}.${field}, or the environment variable ${envName} (named by ${key}.${field}Env)`,
      `${key}.${field}`,
    );
  }
  return value;
}

/**
 * Resolves the account's secrets for its mode. Throws an invalid_input error naming the missing key (never the value)
 * when one it needs is absent, or when a token does not have Slack's prefix (`xoxb-` for the bot, `xapp-` for the app).
 */
export function resolveSlackCredentials(
  config: SlackAccountConfig,
  account: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): SlackCredentials {
  const key = slackConfigKey(account);
  const botToken = pick(config.botToken, config.botTokenEnv, env, 'bot token (xoxb-…)', key, 'botToken');
  if (!botToken.startsWith('xoxb-'))
    throw invalidInput(`${key}: the bot token does not look like one (xoxb-…)`, `${key}.botToken`);
  if (config.mode === 'socket') {
    const appToken = pick(config.appToken, config.appTokenEnv, env, 'app-level token (xapp-…)', key, 'appToken');
    if (!appToken.startsWith('xapp-'))
      throw invalidInput(`${key}: the app-level token does not look like one (xapp-…)`, `${key}.appToken`);
    return { botToken, appToken };
  }
  const signingSecret = pick(
    config.signingSecret,
    config.signingSecretEnv,
    env,
    'signing secret',
    key,
    'signingSecret',
  );
  return { botToken, signingSecret };
}

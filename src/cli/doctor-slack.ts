import { resolveSlackCredentials, slackConfigKey } from '../channels/slack/slack-credentials.ts';
import type { Config } from '../core/config.ts';
import { accountsOf } from '../core/config-accounts.ts';
import { errorMessage } from '../core/errors.ts';
import type { Check } from './doctor.ts';

/**
 * One check per Slack account when `channels.slack` is enabled: the secrets its mode needs are there (bot token, plus
 * the app-level token in socket mode or the signing secret in http mode) and someone is allowed to talk to the app.
 */
export function slackChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const slack = config.channels.slack;
  if (!slack.enabled) return [];
  return accountsOf(slack).map(({ account, config: app }): Check => {
    const label = account === undefined ? 'Slack' : `Slack (${account})`;
    try {
      resolveSlackCredentials(app, account, env);
    } catch (error) {
      return { status: 'fail', label, detail: errorMessage(error) };
    }
    const how = app.mode === 'socket' ? 'Socket Mode (app token present)' : 'Events API at POST /slack/events';
    if (app.allowedUserIds.length === 0)
      return {
        status: 'warn',
        label,
        detail: `${slackConfigKey(account)}.allowedUserIds is empty: the app refuses everyone`,
      };
    return { status: 'ok', label, detail: `${how}; bot token present; ${app.allowedUserIds.length} allowed user(s)` };
  });
}

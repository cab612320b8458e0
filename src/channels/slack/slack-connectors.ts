// Builds the Slack connectors from `channels.slack`: one per account (`accounts.<name>`, or the section itself).
import { accountsOf } from '../../core/config-accounts.ts';
import type { SlackChannelConfig } from '../../core/config-slack.ts';
import type { SlackConnectorDeps, SlackHttpEndpoint } from './slack-connector.ts';
import { SlackConnector } from './slack-connector.ts';

export type { SlackConnectorDeps, SlackHttpEndpoint };
export { SlackConnector };

/**
 * One SlackConnector per configured account of `section` (call it only when the channel is enabled). Throws an
 * invalid_input error naming the key when an account lacks a secret its mode needs. Register each on the Outbox, start
 * it, and hand the http-mode ones' `httpEndpoint` to the gateway (`slackHttpEndpoints` in chat-connectors.ts).
 */
export function createSlackConnectors(section: SlackChannelConfig, deps: SlackConnectorDeps): SlackConnector[] {
  return accountsOf(section).map(({ account, config }) => new SlackConnector(config, account, deps));
}

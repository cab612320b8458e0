// The chat connectors a daemon runs, built from the config: the web page's (when enabled), then one per configured
// account of Telegram, Slack, Signal and Discord. Built once by src/daemon/chat.ts, which registers them with the outbox and
// starts them (the web page and Slack's Events API on every node; the rest as singletons of the cluster).
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { Database } from '../store/tables/index.ts';
import type { Connector } from './connector.ts';
import { createSignalConnectors } from './signal/signal-connectors.ts';
import type { SlackConnector, SlackHttpEndpoint } from './slack/slack-connectors.ts';
import { WebConnector } from './web/web-connector.ts';

/** A chat command as the connectors offer it in their menus: name, usage and a one-line summary. */
export interface ChatCommand {
  name: string;
  usage: string;
  summary: string;
}

/** What the connectors are built from. */
export interface ChatConnectorsDeps {
  config: Config;
  env: NodeJS.ProcessEnv;
  home: string;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** The operations' chat commands (operations/commands.ts `commandList`). */
  commands: readonly ChatCommand[];
}

/** The daemon's chat connectors: all of them in start order, and the web page's and Slack's among them. */
export interface ChatConnectors {
  all: Connector[];
  web: WebConnector | null;
  slack: SlackConnector[];
}

/**
 * Builds the connectors of every enabled channel (see the top); rejects with what a connector's factory throws. The
 * modules of Telegram, Slack and Discord (and their client libraries, tens of megabytes each) are loaded only when
 * their channel is enabled.
 */
export async function createChatConnectors(deps: ChatConnectorsDeps): Promise<ChatConnectors> {
  const { config, env, home, db, clock, logger, commands } = deps;
  const channels = config.channels;
  const web = channels.web.enabled
    ? new WebConnector({ db, config: channels.web, clock, logger: logger.child({ component: 'web' }) })
    : null;
  const all: Connector[] = web ? [web] : [];
  if (channels.telegram.enabled) {
    const { createTelegramConnectors } = await import('./telegram/telegram-connector.ts');
    const menu = commands.map((c) => ({ command: c.name, description: c.summary.slice(0, 256) }));
    all.push(
      ...createTelegramConnectors(channels.telegram, {
        clock,
        logger: logger.child({ component: 'telegram' }),
        env,
        commands: menu,
      }),
    );
  }
  // Slack: one connector per workspace account; the http-mode ones are served at POST /slack/events.
  const slack = channels.slack.enabled
    ? (await import('./slack/slack-connectors.ts')).createSlackConnectors(channels.slack, {
        clock,
        logger: logger.child({ component: 'slack' }),
        env,
        commands: commands.map((c) => ({ command: c.name, description: c.summary })),
      })
    : [];
  all.push(...slack);
  if (channels.signal.enabled)
    all.push(
      ...createSignalConnectors(channels.signal, { clock, logger: logger.child({ component: 'signal' }), home }),
    );
  if (channels.discord.enabled) {
    const { createDiscordConnectors } = await import('./discord/discord-connectors.ts');
    const menu = commands.map((c) => ({ name: c.name, description: c.summary, usage: c.usage }));
    all.push(
      ...createDiscordConnectors(channels.discord, {
        clock,
        logger: logger.child({ component: 'discord' }),
        env,
        commands: menu,
      }),
    );
  }
  return { all, web, slack };
}

/** The http-mode accounts among the Slack `connectors`, for POST /slack/events. */
export function slackHttpEndpoints(connectors: readonly SlackConnector[]): SlackHttpEndpoint[] {
  return connectors.flatMap((c) => (c.httpEndpoint ? [c.httpEndpoint] : []));
}

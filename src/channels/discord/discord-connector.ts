// The Discord connector: one bot through discord.js (Gateway intents Guilds, GuildMessages, DirectMessages and
// MessageContent; DM channels as partials), its REST client pointed at `apiUrl` when set (the Gateway URL comes from
// GET /gateway/bot, or `gatewayUrl`). Messages and interactions go through discord-intake.ts; sends, edits and
// threads through discord-outbound.ts; the seed's commands are registered as guild slash commands at start.
import type { ResponseLike, RESTOptions } from 'discord.js';
import { Client, DefaultRestOptions, Events, GatewayIntentBits, Partials, REST } from 'discord.js';
import { backoffDelay } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { accountKey } from '../../core/config-accounts.ts';
import type { DiscordAccountConfig } from '../../core/config-discord.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type {
  ChannelTarget,
  Connector,
  DeliveryKey,
  InboundHandler,
  OutboundMessage,
  SentMessage,
} from '../connector.ts';
import { StopSignal } from '../stop-signal.ts';
import type { DiscordCommandSpec } from './discord-commands.ts';
import { applicationCommands, registerCommands } from './discord-commands.ts';
import { describeDiscordError } from './discord-errors.ts';
import type { InboundContext } from './discord-inbound.ts';
import { DiscordIntake } from './discord-intake.ts';
import { DISCORD_MAX_MESSAGE_LENGTH, DiscordOutbound } from './discord-outbound.ts';
import { PendingCommands } from './discord-pending.ts';

/** What a Discord connector is built with. */
export interface DiscordConnectorDeps {
  clock: Clock;
  logger: Logger;
  /** The seed's chat commands, registered as slash commands in `guildIds`. */
  commands?: readonly DiscordCommandSpec[];
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
}

const HANDOFF_ATTEMPTS = 3;

/** A Discord bot as a Connector. Build them with `createDiscordConnectors`. */
export class DiscordConnector implements Connector {
  readonly channel = 'discord';
  readonly account: string | undefined;
  /** A message can start a thread (its id is the thread's); a coding session's messages go in the one its launch opened. */
  readonly threads = true;
  /** A message's file is attached to it (multipart upload). */
  readonly files = true;
  readonly maxMessageLength = DISCORD_MAX_MESSAGE_LENGTH;
  /**
   * Sends carry a nonce Discord enforces: a resend soon after a crash returns the message already created. Discord
   * remembers nonces for a few minutes only, so a resend after a longer outage may post twice.
   */
  readonly idempotent = true;
  #config: DiscordAccountConfig;
  #deps: DiscordConnectorDeps;
  #logger: Logger;
  #token: string;
  #rest: REST;
  #client: Client;
  #onMessage: InboundHandler | null = null;
  #pending: PendingCommands;
  #outbound: DiscordOutbound;
  #intake: DiscordIntake;
  #running = false;
  #stop = new StopSignal();
  #retry: Promise<void> | null = null;

  constructor(config: DiscordAccountConfig, token: string, deps: DiscordConnectorDeps, account?: string) {
    this.#config = config;
    this.#deps = deps;
    this.account = account;
    this.#logger = deps.logger.child({ channel: 'discord', ...(account ? { account } : {}) });
    this.#token = token;
    // Sends go through a REST client of their own, which lives as long as the connector (and works before start: the
    // outbox delivers what a previous run left); the Gateway client is rebuilt when a connection attempt fails
    // (discord.js destroys a client whose login failed).
    this.#rest = new REST(restOptions(config)).setToken(token);
    this.#rest.on('rateLimited', (info) =>
      this.#logger.info({ route: info.route, retryAfterMs: info.retryAfter, global: info.global }, 'rate limited'),
    );
    this.#client = this.#makeClient();
    this.#pending = new PendingCommands(deps.clock);
    this.#outbound = new DiscordOutbound(this.#rest, { logger: this.#logger, pending: this.#pending });
    this.#intake = new DiscordIntake({
      clock: deps.clock,
      logger: this.#logger,
      outbound: this.#outbound,
      pending: this.#pending,
      ...(account ? { account } : {}),
      allowedUsers: new Set(config.allowedUserIds),
      allowedChannels: new Set(config.allowedChannels),
      context: () => this.#context(),
      ownThread: (id) => {
        const channel = this.#client.channels.cache.get(id);
        return channel?.isThread() === true && channel.ownerId === this.#client.user?.id;
      },
      maxAttempts: HANDOFF_ATTEMPTS,
      retryDelay: (attempt) => backoffDelay(attempt, 100, 1000, deps.random),
      stopSignal: () => this.#stop,
      running: () => this.#running,
    });
  }

  /**
   * Connects to the Gateway (resolves once the bot is ready), registers the slash commands, and passes every message
   * and interaction to `onMessage`. Throws when Discord refuses the token; other failures are logged and retried in
   * the background.
   */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#stop = new StopSignal();
    if (this.#config.allowedUserIds.length === 0)
      this.#logger.warn(`${this.#key('allowedUserIds')} is empty: every sender will be refused`);
    this.#onMessage = onMessage;
    // A fresh client per start: discord.js cannot log a destroyed one in again.
    this.#client.removeAllListeners();
    this.#client = this.#makeClient();
    this.#listen(this.#client);
    try {
      await this.#connect();
    } catch (error) {
      if ((error as { code?: unknown }).code === 'TokenInvalid') {
        this.#running = false;
        throw new AppError(
          'invalid_input',
          `Discord refused the bot token: check ${this.#key('token')}`,
          this.#key('token'),
        );
      }
      this.#logger.warn({ err: describeDiscordError(error) }, 'Discord not reachable yet; retrying in the background');
      this.#retry = this.#reconnect();
    }
  }

  /** Disconnects; an event being handed over is abandoned unacknowledged. */
  async stop(): Promise<void> {
    if (this.#running) {
      this.#running = false;
      this.#stop.stop();
      this.#pending.clear();
      await this.#retry;
      await this.#intake.idle();
    }
    // Also after a refused start: the client keeps timers until destroyed.
    await this.#client.destroy();
    this.#client.removeAllListeners();
    this.#onMessage = null;
  }

  /**
   * Sends one message (≤ 2,000 characters, buttons as components, its file attached); resolves to its ref. See
   * DiscordOutbound.send.
   */
  async send(target: ChannelTarget, message: OutboundMessage, delivery?: DeliveryKey): Promise<SentMessage> {
    return this.#outbound.send(target, message, delivery);
  }

  /** Edits message `ref` (text, buttons replaced or removed); EditRefusedError when Discord will not. */
  async edit(target: ChannelTarget, ref: string, message: OutboundMessage): Promise<void> {
    await this.#outbound.edit(target, ref, message);
  }

  /** Shows "typing…" (best effort). */
  async typing(target: ChannelTarget): Promise<void> {
    await this.#outbound.typing(target);
  }

  async #connect(): Promise<void> {
    const ready = new Promise<void>((resolve) => this.#client.once(Events.ClientReady, () => resolve()));
    await this.#client.login(this.#token);
    await this.#stop.race(ready);
    const user = this.#client.user;
    this.#logger.info({ bot: user?.username, guilds: this.#client.guilds.cache.size }, 'Discord bot connected');
    const applicationId = this.#config.applicationId ?? this.#client.application?.id;
    const commands = applicationCommands(this.#deps.commands ?? [], this.#logger);
    if (applicationId && commands.length > 0 && this.#config.guildIds.length > 0)
      await registerCommands(this.#rest, applicationId, this.#config.guildIds, commands, this.#logger);
  }

  async #reconnect(): Promise<void> {
    for (let failures = 1; this.#running; failures += 1) {
      if (!(await this.#stop.sleep(this.#deps.clock, backoffDelay(failures, 1000, 60_000, this.#deps.random)))) return;
      try {
        this.#client.removeAllListeners();
        this.#client = this.#makeClient();
        this.#listen(this.#client);
        await this.#connect();
        return;
      } catch (error) {
        this.#logger.warn({ err: describeDiscordError(error), failures }, 'Discord connection failed; retrying');
      }
    }
  }

  /** A Gateway client with the intents and partials the connector needs, its errors logged. */
  #makeClient(): Client {
    const client = new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.DirectMessages,
        GatewayIntentBits.MessageContent,
      ],
      partials: [Partials.Channel],
      rest: restOptions(this.#config),
    });
    client.on(Events.Error, (error) => this.#logger.error({ err: describeDiscordError(error) }, 'Discord error'));
    client.on(Events.Warn, (message) => this.#logger.warn({ detail: message }, 'Discord warning'));
    return client;
  }

  /** Passes `client`'s messages and interactions to the intake. */
  #listen(client: Client): void {
    const onMessage = this.#onMessage;
    if (!onMessage) return;
    client.on(Events.MessageCreate, (message) => this.#intake.message(message, onMessage));
    client.on(Events.InteractionCreate, (interaction) => this.#intake.interaction(interaction, onMessage));
  }

  #context(): InboundContext {
    const botId = this.#client.user?.id;
    if (!botId) throw new Error('the Discord client is not ready');
    return {
      ...(this.account ? { account: this.account } : {}),
      botId,
      threadParent: (id) => {
        const channel = this.#client.channels.cache.get(id);
        return channel?.isThread() ? (channel.parentId ?? undefined) : undefined;
      },
      now: () => this.#deps.clock.now(),
    };
  }

  #key(field: string): string {
    return accountKey('discord', this.account, field);
  }
}

/** REST options: `apiUrl`, rate limits on delivery routes rejected (the outbox waits), `gatewayUrl` over the API's. */
function restOptions(config: DiscordAccountConfig): Partial<RESTOptions> {
  const options: Partial<RESTOptions> = {
    rejectOnRateLimit: (data) => data.route.startsWith('/channels') || data.route.startsWith('/webhooks'),
  };
  if (config.apiUrl) options.api = config.apiUrl.replace(/\/+$/, '');
  const gatewayUrl = config.gatewayUrl;
  if (gatewayUrl) {
    const base = DefaultRestOptions.makeRequest;
    options.makeRequest = async (url, init): Promise<ResponseLike> => {
      const response = await base(url, init);
      if (!response.ok || !new URL(url).pathname.endsWith('/gateway/bot')) return response;
      const data = (await response.json()) as Record<string, unknown>;
      return new Response(JSON.stringify({ ...data, url: gatewayUrl }), {
        status: response.status,
        headers: { 'content-type': 'application/json' },
      });
    };
  }
  return options;
}

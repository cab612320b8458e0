// A fake Discord on 127.0.0.1: the REST API at /api/v10 (fake-discord-rest.ts) and the Gateway WebSocket at /gateway
// (fake-discord-gateway.ts), which GET /gateway/bot names, so discord.js finds it with only `rest.api` set. Tests push
// people's messages (DMs and guild channels, with or without a mention of the bot), slash commands and button presses
// as the Gateway dispatches them, read what the bot sent, edited, threaded and answered, and script failures (a 429
// with Retry-After, a 500, any Discord error) for the next matching request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readRestBody } from './fake-discord-files.ts';
import { FakeGateway } from './fake-discord-gateway.ts';
import type { FakeButton, FakeChannel, FakeMessage, WireUser } from './fake-discord-objects.ts';
import {
  channelObject,
  guildObject,
  memberObject,
  messageObject,
  snowflake,
  wireUser,
} from './fake-discord-objects.ts';
import type { FakeInteraction, RestAnswer, RestState } from './fake-discord-rest.ts';
import { handleRest } from './fake-discord-rest.ts';

export type { FakeButton, FakeChannel, FakeInteraction, FakeMessage };

export const FAKE_DISCORD_TOKEN = 'MTAwMDAwMDAwMDAwMDAwMDAx.FakeDiscord.TokenForTestsOnly0123456789';

/** A failure scripted for the next request matching `method` and `path` (below /api/v10). */
export interface FakeDiscordFailure {
  method: string;
  path: RegExp;
  status: number;
  code?: number;
  message?: string;
  /** Seconds, sent as the Retry-After header and the body's retry_after (429). */
  retryAfter?: number;
}

/** Options of `startFakeDiscord`. */
export interface FakeDiscordOptions {
  /** Guilds and their text channels; default one guild with one channel. */
  guilds?: { id: string; channels: string[] }[];
  /** The port to listen on; default any free one. */
  port?: number;
  /** What GET /gateway/bot names instead of the fake's own Gateway (to test a `gatewayUrl` override). */
  gatewayBotUrl?: string;
}

/** Where a pushed message or command comes from. */
export interface From {
  userId: string;
  username?: string;
  /** A guild channel or thread; default the person's DM channel with the bot. */
  channelId?: string;
}

/** The fake server. Create it with `startFakeDiscord()`. */
export class FakeDiscord implements RestState {
  readonly token = FAKE_DISCORD_TOKEN;
  readonly applicationId = '100000000000000001';
  readonly bot: WireUser = wireUser('100000000000000001', 'switchboard-bot', true);
  /** The `apiUrl` to give the connector (discord.js appends /v10). */
  url = '';
  readonly channels = new Map<string, FakeChannel>();
  readonly messages = new Map<string, FakeMessage>();
  readonly interactions = new Map<string, FakeInteraction>();
  /** Registered guild commands, per guild. */
  readonly commands = new Map<string, { name: string; description: string; options?: unknown[] }[]>();
  /** Every message the bot posted (channels, DMs, threads, filled interaction responses), in order. */
  readonly sent: FakeMessage[] = [];
  readonly edits: { channelId: string; messageId: string; content: string; buttons: FakeButton[][] }[] = [];
  /** Threads the bot started. */
  readonly threads: FakeChannel[] = [];
  /** Channels the bot showed "typing…" in. */
  readonly typing: string[] = [];
  /** Every REST request: method, path, query. */
  readonly requests: { method: string; path: string; query: string }[] = [];
  readonly gateway: FakeGateway;
  #guilds: { id: string; channels: string[] }[];
  #gatewayBotUrl: string | undefined;
  #failures: FakeDiscordFailure[] = [];
  #sequence = 0;
  #server = createServer((req, res) => void this.#handle(req, res));

  constructor(options: FakeDiscordOptions = {}) {
    this.#gatewayBotUrl = options.gatewayBotUrl;
    this.#guilds = options.guilds ?? [{ id: '200000000000000001', channels: ['200000000000000002'] }];
    for (const guild of this.#guilds)
      for (const id of guild.channels) this.channels.set(id, { id, type: 0, guildId: guild.id, name: `ch-${id}` });
    this.gateway = new FakeGateway({
      token: this.token,
      wsUrl: () => this.ownGatewayUrl(),
      ready: () => ({
        v: 10,
        user: { ...this.bot, flags: 0, verified: true, mfa_enabled: false },
        guilds: this.#guilds.map((g) => ({ id: g.id, unavailable: true })),
        application: { id: this.applicationId, flags: 0 },
        private_channels: [],
        presences: [],
        relationships: [],
        geo_ordered_rtc_regions: [],
        guild_join_requests: [],
        user_settings: {},
      }),
      guilds: () =>
        this.#guilds.map((g) =>
          guildObject(
            g.id,
            [...this.channels.values()].filter((c) => c.guildId === g.id),
            this.bot,
            this.now(),
          ),
        ),
    });
    this.#server.on('upgrade', (req, socket, head) => this.gateway.upgrade(req, socket, head));
  }

  /** The first guild and its first channel. */
  get guildId(): string {
    return this.#guilds[0]?.id as string;
  }
  get channelId(): string {
    return this.#guilds[0]?.channels[0] as string;
  }

  /** The Gateway URL GET /gateway/bot answers. */
  wsUrl(): string {
    return this.#gatewayBotUrl ?? this.ownGatewayUrl();
  }

  /** The fake's own Gateway: ws://127.0.0.1:<port>/gateway. */
  ownGatewayUrl(): string {
    return `${this.url.replace(/^http/, 'ws').replace(/\/api$/, '')}/gateway`;
  }

  nextId(): string {
    this.#sequence += 1;
    return snowflake(Date.now(), this.#sequence);
  }

  now(): string {
    return new Date().toISOString();
  }

  dispatch(t: string, d: Record<string, unknown>): void {
    this.gateway.dispatch(t, d);
  }

  /** Scripts a failure for the next request matching it. */
  failNext(failure: FakeDiscordFailure): void {
    this.#failures.push(failure);
  }

  /** The DM channel between the bot and `userId` (made on first use; its id derives from the user's). */
  dmChannel(userId: string, username = `user${userId}`): string {
    const id = `3${userId.padStart(17, '0')}`;
    if (!this.channels.has(id)) this.channels.set(id, { id, type: 1, recipient: wireUser(userId, username) });
    return id;
  }

  /** Dispatches MESSAGE_CREATE from a person; `mention` puts `<@bot>` before the text. Returns the message. */
  userMessage(from: From & { content: string; mention?: boolean }): FakeMessage {
    const author = wireUser(from.userId, from.username ?? `user${from.userId}`);
    const channelId = from.channelId ?? this.dmChannel(from.userId, author.username);
    const channel = this.channels.get(channelId);
    const message: FakeMessage = {
      id: this.nextId(),
      channelId,
      ...(channel?.guildId ? { guildId: channel.guildId } : {}),
      author,
      content: from.mention ? `<@${this.bot.id}> ${from.content}` : from.content,
      buttons: [],
      flags: 0,
    };
    this.messages.set(message.id, message);
    const wire = messageObject(message, this.now());
    this.dispatch('MESSAGE_CREATE', {
      ...wire,
      channel_type: channel?.type ?? 1,
      mentions: from.mention ? [this.bot] : [],
      ...(channel?.guildId ? { member: memberObject(undefined, this.now()) } : {}),
    });
    return message;
  }

  /** Dispatches INTERACTION_CREATE for the slash command `/name args`; returns the interaction. */
  slash(from: From & { name: string; args?: string }): FakeInteraction {
    const registered = [...this.commands.values()].flat().find((c) => c.name === from.name) as { id?: string };
    const options = from.args ? [{ type: 3, name: 'args', value: from.args }] : [];
    const data = { id: registered?.id ?? this.nextId(), name: from.name, type: 1, options };
    return this.#interaction(from, 2, data);
  }

  /** Dispatches INTERACTION_CREATE for a press of the button `customId` of the bot's message `messageId`. */
  press(from: { userId: string; username?: string }, messageId: string, customId: string): FakeInteraction {
    const message = this.messages.get(messageId);
    if (!message) throw new Error(`no message ${messageId}`);
    const data = { custom_id: customId, component_type: 2 };
    return this.#interaction({ ...from, channelId: message.channelId }, 3, data, message);
  }

  /** The texts the bot posted in `channelId`, in order. */
  textsIn(channelId: string): string[] {
    return this.sent.filter((m) => m.channelId === channelId).map((m) => m.content);
  }

  /** Starts listening on 127.0.0.1 (on `port`, default any free one). */
  async listen(port = 0): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/api`;
  }

  async close(): Promise<void> {
    this.gateway.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #interaction(from: From, type: 2 | 3, data: Record<string, unknown>, message?: FakeMessage): FakeInteraction {
    const user = wireUser(from.userId, from.username ?? `user${from.userId}`);
    const channelId = from.channelId ?? this.dmChannel(from.userId, user.username);
    const channel = this.channels.get(channelId) as FakeChannel;
    const interaction: FakeInteraction = {
      id: this.nextId(),
      token: `fake-interaction-token-${this.#sequence}-${Math.random().toString(36).slice(2)}`,
      channelId,
      ...(message ? { messageId: message.id } : {}),
      callbacks: [],
    };
    this.interactions.set(interaction.id, interaction);
    this.dispatch('INTERACTION_CREATE', {
      id: interaction.id,
      application_id: this.applicationId,
      type,
      data: channel.guildId && type === 2 ? { ...data, guild_id: channel.guildId } : data,
      ...(channel.guildId
        ? { guild_id: channel.guildId, member: memberObject(user, this.now()), guild_locale: 'en-US' }
        : { user }),
      channel_id: channelId,
      channel: channelObject(channel),
      token: interaction.token,
      version: 1,
      app_permissions: '2251799813685247',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: channel.guildId ? { '0': channel.guildId } : { '1': from.userId },
      context: channel.guildId ? 0 : 1,
      attachment_size_limit: 8_388_608,
      ...(message ? { message: messageObject(message, this.now()) } : {}),
    });
    return interaction;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const method = req.method ?? 'GET';
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
    this.requests.push({ method, path, query: url.search });
    let answer: RestAnswer;
    const failure = this.#failures.findIndex((f) => f.method === method && f.path.test(path));
    if (failure >= 0) {
      const [f] = this.#failures.splice(failure, 1) as [FakeDiscordFailure];
      answer = failed(f);
    } else {
      const read = await readRestBody(Buffer.concat(chunks), req.headers['content-type'] ?? '');
      answer = read.ok
        ? handleRest(this, method, url, read.body, req.headers.authorization ?? '', read.files)
        : { status: read.status, body: { code: read.code, message: read.message } };
    }
    const headers: Record<string, string> = { ...answer.headers };
    if (answer.body !== undefined) headers['content-type'] = 'application/json';
    res.writeHead(answer.status, headers);
    res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
  }
}

function failed(f: FakeDiscordFailure): RestAnswer {
  if (f.status === 429) {
    const retryAfter = f.retryAfter ?? 1;
    return {
      status: 429,
      headers: { 'retry-after': String(retryAfter), 'x-ratelimit-scope': 'user' },
      body: { message: 'You are being rate limited.', retry_after: retryAfter, global: false, code: 0 },
    };
  }
  return { status: f.status, body: { code: f.code ?? 0, message: f.message ?? `${f.status}: scripted failure` } };
}

/** Starts a fake Discord on 127.0.0.1. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const fake = new FakeDiscord(options);
  await fake.listen(options.port);
  return fake;
}

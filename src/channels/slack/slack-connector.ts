// The Slack connector: one workspace's app through @slack/bolt. Socket Mode by default (Bolt's SocketModeReceiver over
// a WebSocket; no public URL), or the Events API over HTTP (the gateway's POST /slack/events verifies Slack's signature
// and hands the request to this connector's SlackHttpReceiver). A person talks to the orchestrator in a DM with the app
// or by mentioning it in a channel; chat commands come as messages (`/claude …`) or through the one slash command
// (`/switchboard claude …`); presses of Block Kit buttons come back as pressed commands. Every event is acknowledged to
// Slack only after the InboundHandler resolved (slack-receiver.ts). Sends and edits go through the Web API
// (chat.postMessage with thread_ts for a thread, chat.update), their failures classified for the outbox.
import type { App as AppType } from '@slack/bolt';
import { App, webApi } from '@slack/bolt';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type {
  ChannelTarget,
  Connector,
  InboundHandler,
  InboundMessage,
  OutboundMessage,
  SentMessage,
} from '../connector.ts';
import { renderMessage, SLACK_MAX_MESSAGE_LENGTH } from './slack-blocks.ts';
import type { SlackAccountConfig, SlackCredentials } from './slack-credentials.ts';
import { resolveSlackCredentials, slackConfigKey } from './slack-credentials.ts';
import { describeSlackError, platformError, toDeliveryError } from './slack-errors.ts';
import type { SlackBlockActions, SlackCommand, SlackMessageEvent } from './slack-inbound.ts';
import {
  channelRefusalText,
  commandHelpText,
  commandToInbound,
  eventToInbound,
  isConversational,
  NOT_ACCEPTED_TEXT,
  pressToInbound,
  refusalText,
  slackBlockActionsSchema,
  slackCommandSchema,
  slackMessageEventSchema,
} from './slack-inbound.ts';
import { boltLogger } from './slack-logger.ts';
import type { SlackHttpReply, SlackHttpRequest } from './slack-receiver.ts';
import { SlackHttpReceiver, SlackSocketReceiver } from './slack-receiver.ts';
import type { SignatureVerdict } from './slack-signature.ts';
import { SlackSignatureVerifier } from './slack-signature.ts';

export { SLACK_MAX_MESSAGE_LENGTH };

/** Slack's last retry of an unacknowledged event: after it the sender is told, since nothing will come again. */
const LAST_RETRY = 3;
/** Auth errors that mean the bot token will never work. */
const AUTH_REFUSED = new Set(['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired']);
/** How many sent thread replies are remembered (to send a reply to a reply into its parent's thread). */
const MAX_THREAD_PARENTS = 10_000;

export interface SlackConnectorDeps {
  clock: Clock;
  logger: Logger;
  /** Where the `…Env` secrets are looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The chat commands, listed to whoever sends the bare slash command. */
  commands?: readonly { command: string; description: string }[];
}

/** What the gateway's POST /slack/events needs of an account in http mode. */
export interface SlackHttpEndpoint {
  account?: string;
  /** Checks the signature of the raw body (remembering it: a second use is a replay). */
  verify(raw: Buffer, timestamp: string | undefined, signature: string | undefined): SignatureVerdict;
  /** Forgets an accepted signature whose request was not processed. */
  forget(signature: string | undefined): void;
  /** Processes a verified request; the reply is the acknowledgement. */
  handle(request: SlackHttpRequest): Promise<SlackHttpReply>;
}

/** One Slack workspace's app as a Connector. Build it with `createSlackConnectors`. */
export class SlackConnector implements Connector {
  readonly channel = 'slack';
  readonly account: string | undefined;
  readonly threads = true;
  readonly maxMessageLength = SLACK_MAX_MESSAGE_LENGTH;
  /** chat.postMessage has no idempotency key. */
  readonly idempotent = false;
  #config: SlackAccountConfig;
  #deps: SlackConnectorDeps;
  #logger: Logger;
  #credentials: SlackCredentials;
  #web: InstanceType<typeof webApi.WebClient>;
  #http: SlackHttpReceiver | undefined;
  #verifier: SlackSignatureVerifier | undefined;
  #app: AppType | undefined;
  #allowedUsers: Set<string>;
  #allowedChannels: Set<string>;
  #botUserId: string | undefined;
  #threadParents = new Map<string, string>();

  constructor(config: SlackAccountConfig, account: string | undefined, deps: SlackConnectorDeps) {
    this.account = account;
    this.#config = config;
    this.#deps = deps;
    this.#logger = deps.logger.child({ channel: 'slack', ...(account ? { account } : {}) });
    this.#credentials = resolveSlackCredentials(config, account, deps.env);
    this.#web = new webApi.WebClient(this.#credentials.botToken, this.#clientOptions());
    this.#allowedUsers = new Set(config.allowedUserIds);
    this.#allowedChannels = new Set(config.allowedChannels);
    if (config.mode === 'http' && this.#credentials.signingSecret) {
      this.#http = new SlackHttpReceiver();
      this.#verifier = new SlackSignatureVerifier(this.#credentials.signingSecret, deps.clock);
    }
  }

  /** The mode this account runs in. */
  get mode(): 'socket' | 'http' {
    return this.#config.mode;
  }

  /** The app's own user id once `start` reached Slack. */
  get botUserId(): string | undefined {
    return this.#botUserId;
  }

  /** In http mode, what POST /slack/events hands this account's requests to; undefined in socket mode. */
  get httpEndpoint(): SlackHttpEndpoint | undefined {
    const http = this.#http;
    const verifier = this.#verifier;
    if (!http || !verifier) return undefined;
    return {
      ...(this.account ? { account: this.account } : {}),
      verify: (raw, timestamp, signature) => verifier.verify(raw, timestamp, signature),
      forget: (signature) => verifier.forget(signature),
      handle: (request) => http.handle(request),
    };
  }

  /**
   * Checks the bot token (auth.test), then listens: opens the Socket Mode connection in the background, or (http mode)
   * accepts the requests the gateway hands over. Throws an invalid_input error when Slack refuses the token.
   */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.#app) return;
    if (this.#allowedUsers.size === 0)
      this.#logger.warn(`${slackConfigKey(this.account)}.allowedUserIds is empty: every sender will be refused`);
    let auth: { user_id?: string; bot_id?: string };
    try {
      auth = await this.#web.auth.test();
    } catch (error) {
      const code = platformError(error);
      if (code && AUTH_REFUSED.has(code)) {
        throw new AppError(
          'invalid_input',
          `Slack refused the bot token (${code}): check ${this.#source('botToken')}`,
          `${slackConfigKey(this.account)}.botToken`,
        );
      }
      throw new AppError('unavailable', `Slack is not reachable: ${describeSlackError(error)}`);
    }
    this.#botUserId = auth.user_id;
    const logger = boltLogger(this.#logger);
    const receiver =
      this.#http ??
      new SlackSocketReceiver(
        {
          appToken: this.#credentials.appToken ?? '',
          logger,
          installerOptions: { clientOptions: this.#apiUrl() ? { slackApiUrl: this.#apiUrl() } : {} },
        },
        this.#logger,
      );
    const app = new App({
      token: this.#credentials.botToken,
      ...(auth.bot_id ? { botId: auth.bot_id } : {}),
      ...(auth.user_id ? { botUserId: auth.user_id } : {}),
      tokenVerificationEnabled: false,
      receiver,
      logger,
      clientOptions: this.#clientOptions(),
    });
    app.error(async (error) => {
      throw error;
    });
    this.#listen(app, onMessage);
    this.#app = app;
    const started = app.start();
    if (this.#http) await started;
    else
      started.then(
        () => this.#logger.info({ bot: this.#botUserId }, 'Slack app connected over Socket Mode'),
        (error: unknown) => this.#logger.error({ err: describeSlackError(error) }, 'Slack Socket Mode did not start'),
      );
  }

  /** Closes the Socket Mode connection (or stops taking HTTP requests). */
  async stop(): Promise<void> {
    const app = this.#app;
    this.#app = undefined;
    await app?.stop();
  }

  /**
   * Posts one message (at most 3,000 characters of text) with its buttons as Block Kit, in `target.thread` when set;
   * resolves to `{ ref: <ts> }`. Throws a DeliveryError: `rate_limited` with Slack's Retry-After on a 429.
   */
  async send(target: ChannelTarget, message: OutboundMessage): Promise<SentMessage> {
    const rendered = renderMessage(message);
    const thread = target.thread ? (this.#threadParents.get(target.thread) ?? target.thread) : undefined;
    let ts: string | undefined;
    try {
      const result = await this.#web.chat.postMessage({
        channel: target.chat,
        text: rendered.text,
        ...(rendered.blocks ? { blocks: rendered.blocks } : {}),
        ...(thread ? { thread_ts: thread } : {}),
        unfurl_links: false,
        unfurl_media: false,
      });
      ts = result.ts;
    } catch (error) {
      throw toDeliveryError(error);
    }
    if (!ts) throw toDeliveryError(new Error('chat.postMessage answered without a ts'));
    if (thread) this.#rememberThread(ts, thread);
    return { ref: ts };
  }

  /**
   * Replaces message `ref` (chat.update): its text, and its buttons by the message's or none. Throws EditRefusedError
   * when Slack will not edit it (deleted, too old), else a DeliveryError.
   */
  async edit(target: ChannelTarget, ref: string, message: OutboundMessage): Promise<void> {
    const rendered = renderMessage(message, true);
    try {
      await this.#web.chat.update({
        channel: target.chat,
        ts: ref,
        text: rendered.text,
        blocks: rendered.blocks ?? [],
      });
    } catch (error) {
      throw toDeliveryError(error, true);
    }
  }

  #apiUrl(): string | undefined {
    const url = this.#config.apiUrl;
    return url ? (url.endsWith('/') ? url : `${url}/`) : undefined;
  }

  /** Web API options: the configured base, no retries of its own and 429s thrown (the outbox retries). */
  #clientOptions(): ConstructorParameters<typeof webApi.WebClient>[1] {
    const apiUrl = this.#apiUrl();
    return {
      ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout: 30_000,
      logger: boltLogger(this.#logger),
    };
  }

  #source(field: 'botToken' | 'appToken' | 'signingSecret'): string {
    const key = slackConfigKey(this.account);
    return this.#config[field] ? `${key}.${field}` : `the environment variable ${this.#config[`${field}Env`]}`;
  }

  #rememberThread(ts: string, parent: string): void {
    this.#threadParents.set(ts, parent);
    if (this.#threadParents.size > MAX_THREAD_PARENTS) {
      const oldest = this.#threadParents.keys().next().value;
      if (oldest !== undefined) this.#threadParents.delete(oldest);
    }
  }

  #listen(app: AppType, onMessage: InboundHandler): void {
    const onEvent = async (args: { event: unknown; context: { retryNum?: number } }): Promise<void> => {
      const parsed = slackMessageEventSchema.safeParse(args.event);
      if (parsed.success && isConversational(parsed.data))
        await this.#event(parsed.data, args.context.retryNum ?? 0, onMessage);
    };
    app.event('message', onEvent);
    app.event('app_mention', onEvent);
    app.command(/^\/.+/, async ({ body, ack }) => {
      const parsed = slackCommandSchema.safeParse(body);
      if (!parsed.success) return ack();
      const answer = await this.#command(parsed.data, onMessage);
      await ack(answer === undefined ? undefined : { response_type: 'ephemeral', text: answer });
    });
    app.action({ type: 'block_actions' }, async ({ body }) => {
      const parsed = slackBlockActionsSchema.safeParse(body);
      if (parsed.success) await this.#press(parsed.data, onMessage);
    });
  }

  /** Whether the user (and, outside DMs, the channel) may talk to the app: undefined when allowed, else the refusal. */
  #refusal(userId: string, channel: string, direct: boolean): string | undefined {
    if (!this.#allowedUsers.has(userId)) {
      this.#logger.warn(
        { userId, chat: channel },
        `Slack user not on ${slackConfigKey(this.account)}.allowedUserIds refused`,
      );
      return refusalText(userId, this.account);
    }
    if (!direct && this.#allowedChannels.size > 0 && !this.#allowedChannels.has(channel)) {
      this.#logger.warn(
        { userId, chat: channel },
        `Slack channel not on ${slackConfigKey(this.account)}.allowedChannels`,
      );
      return channelRefusalText(channel, this.account);
    }
    return undefined;
  }

  async #event(event: SlackMessageEvent, retryNum: number, onMessage: InboundHandler): Promise<void> {
    const user = event.user ?? '';
    const direct = event.channel_type === 'im';
    const refusal = this.#refusal(user, event.channel, direct);
    if (refusal) {
      await this.#tell(event.channel, user, refusal, direct, event.thread_ts);
      return;
    }
    const inbound = eventToInbound(event, this.account, this.#botUserId, this.#deps.clock.now());
    await this.#handOff(inbound, onMessage, retryNum >= LAST_RETRY, () =>
      this.#tell(event.channel, user, NOT_ACCEPTED_TEXT, direct, event.thread_ts),
    );
  }

  /** Returns the ephemeral answer to the command, or undefined when it was handed over. */
  async #command(command: SlackCommand, onMessage: InboundHandler): Promise<string | undefined> {
    const refusal = this.#refusal(command.user_id, command.channel_id, command.channel_id.startsWith('D'));
    if (refusal) return refusal;
    const inbound = commandToInbound(command, this.account, this.#deps.clock.now());
    if (!inbound) return commandHelpText(command.command, this.#deps.commands ?? []);
    let answer: string | undefined;
    await this.#handOff(inbound, onMessage, true, async () => {
      answer = NOT_ACCEPTED_TEXT;
    });
    return answer;
  }

  async #press(payload: SlackBlockActions, onMessage: InboundHandler): Promise<void> {
    const inbound = pressToInbound(payload, this.account, this.#deps.clock.now());
    if (!inbound) return;
    const chat = inbound.target.chat;
    const refusal = this.#refusal(inbound.userId, chat, chat.startsWith('D'));
    if (refusal) {
      await this.#tell(chat, inbound.userId, refusal, false, inbound.target.thread);
      return;
    }
    await this.#handOff(inbound, onMessage, true, () =>
      this.#tell(chat, inbound.userId, NOT_ACCEPTED_TEXT, false, inbound.target.thread),
    );
  }

  /**
   * Hands `inbound` to the handler. When it fails and Slack will deliver the event again, rethrows (the event stays
   * unacknowledged); on the last chance the sender is told instead and the event is acknowledged.
   */
  async #handOff(
    inbound: InboundMessage,
    onMessage: InboundHandler,
    lastChance: boolean,
    tell: () => Promise<void>,
  ): Promise<void> {
    try {
      await onMessage(inbound);
    } catch (error) {
      const err = error instanceof Error ? error.message : String(error);
      if (!lastChance) {
        this.#logger.warn({ messageId: inbound.id, err }, 'inbound Slack message not accepted yet; Slack will retry');
        throw error;
      }
      this.#logger.error(
        { messageId: inbound.id, err },
        'inbound Slack message could not be accepted; the sender was told',
      );
      await tell();
    }
  }

  /** The connector's own reply: a message in a DM, else one only `user` sees (chat.postEphemeral). Logged on failure. */
  async #tell(channel: string, user: string, text: string, direct: boolean, thread: string | undefined): Promise<void> {
    try {
      const common = { channel, text, ...(thread ? { thread_ts: thread } : {}) };
      if (direct) await this.#web.chat.postMessage(common);
      else await this.#web.chat.postEphemeral({ ...common, user });
    } catch (error) {
      this.#logger.warn({ err: describeSlackError(error), chat: channel }, 'could not reply on Slack');
    }
  }
}

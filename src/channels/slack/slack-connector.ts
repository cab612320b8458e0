// The Slack connector: one workspace's app through @slack/bolt. Socket Mode by default (Bolt's SocketModeReceiver over
// a WebSocket; no public URL), or the Events API over HTTP (the gateway's POST /slack/events verifies Slack's signature
// and hands the request to this connector's SlackHttpReceiver). A person talks to the orchestrator in a DM with the app
// or by mentioning it in a channel; chat commands come as messages (`/claude …`) or through the one slash command
// (`/switchboard claude …`); presses of Block Kit buttons come back as pressed commands. Every event is acknowledged to
// Slack only after the InboundHandler resolved (slack-receiver.ts). Sends and edits go through the Web API
// (chat.postMessage with thread_ts for a thread, chat.update; a file through files.uploadV2), their failures classified
// for the outbox.
import { App, webApi } from '@slack/bolt';
import { backoffDelay } from '../../core/backoff.ts';
import type { Clock, Timer } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { ChannelTarget, Connector, InboundHandler, OutboundMessage, SentMessage } from '../connector.ts';
import { renderMessage, SLACK_MAX_MESSAGE_LENGTH } from './slack-blocks.ts';
import type { SlackAccountConfig, SlackCredentials } from './slack-credentials.ts';
import { resolveSlackCredentials, slackConfigKey } from './slack-credentials.ts';
import { describeSlackError, platformError, toDeliveryError } from './slack-errors.ts';
import { shareFile } from './slack-files.ts';
import { SlackIntake } from './slack-intake.ts';
import { boltLogger } from './slack-logger.ts';
import type { SlackHttpReply, SlackHttpRequest } from './slack-receiver.ts';
import { SlackHttpReceiver, SlackSocketReceiver } from './slack-receiver.ts';
import type { SignatureVerdict } from './slack-signature.ts';
import { SlackSignatureVerifier } from './slack-signature.ts';

export { SLACK_MAX_MESSAGE_LENGTH };

/** Auth errors that mean the bot token will never work. */
const AUTH_REFUSED = new Set(['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired']);
/** Backoff of the start's retries while Slack cannot be reached. */
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;
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
  /** A message's file is shared through files.uploadV2. */
  readonly files = true;
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
  #app: App | undefined;
  #allowedUsers: Set<string>;
  #allowedChannels: Set<string>;
  #botUserId: string | undefined;
  #threadParents = new Map<string, string>();
  #running = false;
  #retryTimer: Timer | undefined;

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
   * accepts the requests the gateway hands over. Throws an invalid_input error when Slack refuses the token; when Slack
   * cannot be reached, keeps trying in the background (with backoff) and resolves.
   */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.#app || this.#running) return;
    this.#running = true;
    if (this.#allowedUsers.size === 0)
      this.#logger.warn(`${slackConfigKey(this.account)}.allowedUserIds is empty: every sender will be refused`);
    try {
      await this.#connect(onMessage);
    } catch (error) {
      if (error instanceof AppError && error.kind === 'invalid_input') {
        this.#running = false;
        throw error;
      }
      this.#logger.warn({ err: describeSlackError(error) }, 'Slack not reachable yet; retrying in the background');
      this.#retry(onMessage, 1);
    }
  }

  /** Closes the Socket Mode connection (or stops taking HTTP requests), and any retry of the start. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#retryTimer?.cancel();
    this.#retryTimer = undefined;
    const app = this.#app;
    this.#app = undefined;
    await app?.stop();
  }

  #retry(onMessage: InboundHandler, failures: number): void {
    const delay = backoffDelay(failures, RETRY_BASE_MS, RETRY_MAX_MS);
    this.#retryTimer = this.#deps.clock.after(delay, () => {
      this.#retryTimer = undefined;
      if (!this.#running) return;
      this.#connect(onMessage).catch((error: unknown) => {
        if (!this.#running) return;
        if (error instanceof AppError && error.kind === 'invalid_input') {
          this.#logger.error({ err: error.message }, 'Slack refused the bot token; the connector stays stopped');
          return;
        }
        this.#logger.warn({ err: describeSlackError(error), failures }, 'Slack still not reachable; retrying');
        this.#retry(onMessage, failures + 1);
      });
    });
  }

  /** auth.test, then the Bolt app with its receiver, started. Throws AppError invalid_input for a refused token. */
  async #connect(onMessage: InboundHandler): Promise<void> {
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
      throw error;
    }
    if (!this.#running) return;
    this.#botUserId = auth.user_id;
    const logger = boltLogger(this.#logger);
    const apiUrl = this.#apiUrl();
    const receiver =
      this.#http ??
      new SlackSocketReceiver(
        {
          appToken: this.#credentials.appToken ?? '',
          logger,
          installerOptions: { clientOptions: apiUrl ? { slackApiUrl: apiUrl } : {} },
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
    new SlackIntake({
      account: this.account,
      web: this.#web,
      clock: this.#deps.clock,
      logger: this.#logger,
      allowedUsers: this.#allowedUsers,
      allowedChannels: this.#allowedChannels,
      commands: this.#deps.commands ?? [],
      botUserId: () => this.#botUserId,
    }).listen(app, onMessage);
    this.#app = app;
    const started = app.start();
    if (this.#http) await started;
    else
      started.then(
        () => this.#logger.info({ bot: this.#botUserId }, 'Slack app connected over Socket Mode'),
        (error: unknown) =>
          this.#logger.error(
            { err: describeSlackError(error) },
            `Slack Socket Mode did not start (check ${this.#source('appToken')})`,
          ),
      );
  }

  /**
   * Posts one message (at most 3,000 characters of text) with its buttons as Block Kit, in `target.thread` when set;
   * resolves to `{ ref: <ts> }`. A file is shared with the text as its comment (files.uploadV2, slack-files.ts), no ref
   * then (Slack names the file, not the message sharing it). Throws a DeliveryError: `rate_limited` on a 429.
   */
  async send(target: ChannelTarget, message: OutboundMessage): Promise<SentMessage | void> {
    const thread = target.thread ? (this.#threadParents.get(target.thread) ?? target.thread) : undefined;
    if (!message.file) return this.#post(target, thread, message);
    // A file's comment has no Block Kit: a message with buttons is posted first, and the file follows without comment.
    const posted = message.buttons?.length
      ? await this.#post(target, thread, { ...message, file: undefined })
      : undefined;
    const comment = posted ? undefined : renderMessage(message).text;
    await shareFile(this.#web, { channel: target.chat, thread, comment, file: message.file });
    return posted;
  }

  /** chat.postMessage of `message` (in `thread` when set); resolves to its ts as the ref. */
  async #post(target: ChannelTarget, thread: string | undefined, message: OutboundMessage): Promise<SentMessage> {
    const rendered = renderMessage(message);
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
}

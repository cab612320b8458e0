// The Telegram connector: grammY's Bot API client, long polling driven here (not by bot.start()) so that the update
// offset only moves past an update once the InboundHandler resolved for it. grammY's own loop records an update as
// "tried" before handling it and bot.stop() confirms it, which would lose a message cut off by a restart; here a
// restart before acceptance always leads to a redelivery (the engine deduplicates by message id). Typed messages and
// button presses (callback queries) go through the same intake (telegram-intake.ts); sends, edits and answers are in
// telegram-outbound.ts.
import { Bot, GrammyError } from 'grammy';
import { backoffDelay } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { accountsOf } from '../../core/config-accounts.ts';
import type { TelegramAccountConfig, TelegramChannelConfig } from '../../core/config-channels.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { ChannelTarget, Connector, InboundHandler, OutboundMessage, SentMessage } from '../connector.ts';
import { StopSignal } from '../stop-signal.ts';
import type { BotCommandSpec } from './telegram-commands.ts';
import { botCommands } from './telegram-commands.ts';
import { describeTelegramError } from './telegram-errors.ts';
import type { TelegramUpdate } from './telegram-inbound.ts';
import { TelegramIntake } from './telegram-intake.ts';
import { telegramKey } from './telegram-keys.ts';
import type { ApiSignal } from './telegram-outbound.ts';
import { TELEGRAM_MAX_CAPTION_LENGTH, TELEGRAM_MAX_MESSAGE_LENGTH, TelegramOutbound } from './telegram-outbound.ts';
import { resolveBotToken } from './telegram-token.ts';

export { TELEGRAM_MAX_MESSAGE_LENGTH };

/** The kinds of update the bot asks Telegram for: typed messages and button presses. */
const ALLOWED_UPDATES = ['message' as const, 'callback_query' as const];

export interface TelegramConnectorDeps {
  clock: Clock;
  logger: Logger;
  /** Where `botTokenEnv` is looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The bot's account name when it is a named one (`channels.telegram.accounts.<account>`). */
  account?: string;
  /** The bot's command menu, registered with setMyCommands at start (the commands are handled above channels/). */
  commands?: readonly BotCommandSpec[];
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
}

/** A Telegram bot as a Connector. Build it with `createTelegramConnector`. */
export class TelegramConnector implements Connector {
  readonly channel = 'telegram';
  readonly account: string | undefined;
  readonly maxMessageLength = TELEGRAM_MAX_MESSAGE_LENGTH;
  /** A message's file goes as a document (sendDocument), its text as the caption. */
  readonly files = true;
  readonly maxFileCaptionLength = TELEGRAM_MAX_CAPTION_LENGTH;
  /** The Bot API has no idempotency key: a send a crash interrupted cannot be told apart from one that went out. */
  readonly idempotent = false;
  #config: TelegramAccountConfig;
  #deps: TelegramConnectorDeps;
  #logger: Logger;
  #token: string;
  #bot: Bot;
  #allowed: Set<number>;
  #outbound: TelegramOutbound;
  #intake: TelegramIntake;
  #running = false;
  #ready = false;
  #username: string | undefined;
  #abort = new AbortController();
  #stop = new StopSignal();
  #loop: Promise<void> | null = null;
  /** The next update id to ask for: every update below it was handled. Undefined until one was. */
  #offset: number | undefined;

  constructor(config: TelegramAccountConfig, deps: TelegramConnectorDeps) {
    this.#config = config;
    this.#deps = deps;
    this.account = deps.account;
    this.#logger = deps.logger.child({ channel: 'telegram', ...(deps.account ? { account: deps.account } : {}) });
    this.#token = resolveBotToken(config, deps.env, deps.account);
    // Every Bot API call ends within the long-poll timeout plus `requestTimeoutSeconds`.
    const timeoutSeconds = config.pollTimeoutSeconds + config.requestTimeoutSeconds;
    this.#bot = new Bot(this.#token, {
      client: { timeoutSeconds, ...(config.apiRoot ? { apiRoot: config.apiRoot } : {}) },
    });
    this.#allowed = new Set(config.allowedUserIds);
    this.#outbound = new TelegramOutbound(this.#bot.api, {
      format: config.format,
      logger: this.#logger,
      token: this.#token,
    });
    this.#intake = new TelegramIntake({
      clock: deps.clock,
      logger: this.#logger,
      outbound: this.#outbound,
      allowed: this.#allowed,
      botUsername: () => this.#username,
      ...(deps.account ? { account: deps.account } : {}),
      maxAttempts: config.inboundMaxAttempts,
      running: () => this.#running,
      stopSignal: () => this.#stop,
      apiSignal: () => this.#signal(),
      retryDelay: (attempt) => this.#retryDelay(attempt),
    });
  }

  /** The bot's username once `start` reached Telegram. */
  get botUsername(): string | undefined {
    return this.#username;
  }

  /**
   * Checks the token (getMe), removes any webhook, registers the command menu, and starts long polling in the background.
   * Throws when Telegram refuses the token; other failures are logged and retried in the background.
   */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#abort = new AbortController();
    this.#stop = new StopSignal();
    if (this.#allowed.size === 0)
      this.#logger.warn(`${telegramKey(this.account, 'allowedUserIds')} is empty: every sender will be refused`);
    try {
      await this.#setup();
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 401) {
        this.#running = false;
        throw new AppError(
          'invalid_input',
          `Telegram refused the bot token (401 Unauthorized): check ${this.#tokenSource()}`,
          telegramKey(this.account, 'botToken'),
        );
      }
      this.#logger.warn(
        { err: describeTelegramError(error, this.#token) },
        'Telegram not reachable yet; retrying in the background',
      );
    }
    this.#loop = this.#poll(this.#stamped(onMessage)).catch((error: unknown) => {
      this.#logger.error(
        { err: describeTelegramError(error, this.#token) },
        'Telegram polling stopped by an unexpected error',
      );
    });
  }

  /**
   * A named bot's messages carry its account in their target (replies go back through this bot) and in their id (two
   * bots in one chat see the same message ids).
   */
  #stamped(onMessage: InboundHandler): InboundHandler {
    const account = this.account;
    if (account === undefined) return onMessage;
    return (message) =>
      onMessage({ ...message, id: `${account}:${message.id}`, target: { ...message.target, account } });
  }

  /** Stops polling without waiting for a pending hand-off; confirms only the updates that were fully handled. */
  async stop(): Promise<void> {
    if (this.#running) {
      this.#running = false;
      this.#stop.stop();
      this.#abort.abort();
    }
    await this.#loop;
    this.#loop = null;
    if (this.#offset === undefined) return;
    // Confirm what was handled (so a restart does not see it again), but never hold up shutdown for long.
    const abort = new AbortController();
    const timer = this.#deps.clock.after(this.#config.shutdownTimeoutMs, () => abort.abort());
    try {
      await this.#bot.api.getUpdates(
        { offset: this.#offset, limit: 1, timeout: 0 },
        abort.signal as unknown as ApiSignal,
      );
    } catch (error) {
      this.#logger.debug(
        { err: describeTelegramError(error, this.#token) },
        'could not confirm handled updates on stop',
      );
    } finally {
      timer.cancel();
    }
  }

  /**
   * Sends one message (at most 4096 characters) as MarkdownV2, or as plain text if Telegram cannot parse it, with its
   * buttons as an inline keyboard (each button's command as its callback_data), and its file as a document with the
   * text (at most 1,024 characters then, the outbox sees to it) as its caption; resolves to `{ ref: <message_id> }`.
   */
  async send(target: ChannelTarget, message: OutboundMessage): Promise<SentMessage> {
    return this.#outbound.send(target, message);
  }

  /**
   * Edits message `ref` in place (editMessageText, formatted like `send`): its text, and its keyboard replaced by the
   * message's buttons or removed. Resolves when the message already shows exactly that; throws EditRefusedError when
   * Telegram will not edit it any more (deleted, too old: the outbox then sends a new message), else a DeliveryError.
   */
  async edit(target: ChannelTarget, ref: string, message: OutboundMessage): Promise<void> {
    await this.#outbound.edit(target, ref, message);
  }

  /** Shows "typing…" in the chat (best effort: failures are only logged). */
  async typing(target: ChannelTarget): Promise<void> {
    await this.#outbound.typing(target);
  }

  #signal(): ApiSignal {
    return this.#abort.signal as unknown as ApiSignal;
  }

  #tokenSource(): string {
    return this.#config.botToken
      ? telegramKey(this.account, 'botToken')
      : `the environment variable ${this.#config.botTokenEnv}`;
  }

  async #setup(): Promise<void> {
    const signal = this.#signal();
    // getMe directly: bot.init() would retry network errors forever, with no way to report them.
    this.#username ??= (await this.#bot.api.getMe(signal)).username;
    // Long polling and a webhook exclude each other; pending updates are kept.
    await this.#bot.api.deleteWebhook({}, signal);
    const commands = botCommands(this.#deps.commands ?? [], this.#logger);
    if (commands.length > 0) {
      try {
        await this.#bot.api.setMyCommands(commands, {}, signal);
      } catch (error) {
        this.#logger.warn({ err: describeTelegramError(error, this.#token) }, 'could not register the command menu');
      }
    }
    this.#ready = true;
    this.#logger.info({ bot: this.#username }, 'Telegram bot connected; long polling');
  }

  /** Waits `ms` on the injected clock, or until stop. */
  async #sleep(ms: number): Promise<void> {
    await this.#stop.sleep(this.#deps.clock, ms);
  }

  #retryDelay(failures: number): number {
    return backoffDelay(failures, this.#config.retryBaseDelayMs, this.#config.retryMaxDelayMs, this.#deps.random);
  }

  async #poll(onMessage: InboundHandler): Promise<void> {
    let failures = 0;
    while (this.#running) {
      let updates: TelegramUpdate[];
      try {
        if (!this.#ready) await this.#setup();
        const request = { timeout: this.#config.pollTimeoutSeconds, allowed_updates: ALLOWED_UPDATES };
        updates = await this.#bot.api.getUpdates(
          this.#offset === undefined ? request : { ...request, offset: this.#offset },
          this.#signal(),
        );
        failures = 0;
      } catch (error) {
        if (!this.#running) return;
        failures += 1;
        const wait = this.#pollFailure(error, failures);
        if (wait === null) {
          this.#running = false;
          return;
        }
        await this.#sleep(wait);
        continue;
      }
      for (const update of updates) {
        if (!this.#running || !(await this.#intake.handle(update, onMessage))) return;
        this.#offset = update.update_id + 1;
      }
    }
  }

  /** Logs a failed getUpdates (or setup) call; returns how long to wait before the next one, or null to give up. */
  #pollFailure(error: unknown, failures: number): number | null {
    const err = describeTelegramError(error, this.#token);
    if (error instanceof GrammyError) {
      if (error.error_code === 401) {
        this.#logger.error({ err }, `Telegram refused the bot token; polling stopped (check ${this.#tokenSource()})`);
        return null;
      }
      if (error.error_code === 409) {
        this.#logger.error({ err }, 'another process is polling this bot (or a webhook was set); retrying');
        return this.#retryDelay(failures);
      }
      if (error.error_code === 429) return (error.parameters.retry_after ?? 1) * 1000;
    }
    this.#logger.warn({ err, failures }, 'Telegram request failed; retrying');
    return this.#retryDelay(failures);
  }
}

/**
 * Builds the Telegram connector from `config.channels.telegram` (call it only when the channel is enabled). Throws an
 * invalid_input error naming `channels.telegram.botToken` when there is no usable token. Register the result on the
 * Outbox and `start(onMessage)` it.
 */
export function createTelegramConnector(config: TelegramAccountConfig, deps: TelegramConnectorDeps): TelegramConnector {
  return new TelegramConnector(config, deps);
}

/**
 * One Telegram connector per bot of `channels.telegram` (the section itself, or each of its `accounts`). Throws like
 * createTelegramConnector, naming the account's key.
 */
export function createTelegramConnectors(
  section: TelegramChannelConfig,
  deps: Omit<TelegramConnectorDeps, 'account'>,
): TelegramConnector[] {
  return accountsOf(section).map(
    ({ account, config }) => new TelegramConnector(config, { ...deps, ...(account ? { account } : {}) }),
  );
}

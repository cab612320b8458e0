// The Telegram connector: grammY's Bot API client, long polling driven here (not by bot.start()) so that the update
// offset only moves past an update once the InboundHandler resolved for it. grammY's own loop records an update as
// "tried" before handling it and bot.stop() confirms it, which would lose a message cut off by a restart; here a
// restart before acceptance always leads to a redelivery (the engine deduplicates by message id).
import { Bot, GrammyError } from 'grammy';
import { backoffDelay } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import type { TelegramChannelConfig } from '../../core/config-channels.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { ChannelTarget, Connector, InboundHandler, OutboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { StopSignal } from '../stop-signal.ts';
import { toMarkdownV2 } from './markdown-v2.ts';
import type { BotCommandSpec } from './telegram-commands.ts';
import { botCommands } from './telegram-commands.ts';
import { describeTelegramError, isEntityParseError, toDeliveryError } from './telegram-errors.ts';
import type { TelegramUpdate } from './telegram-inbound.ts';
import {
  notAcceptedText,
  refusalText,
  replyMessageId,
  targetOf,
  TEXT_ONLY_TEXT,
  toInbound,
} from './telegram-inbound.ts';
import { resolveBotToken } from './telegram-token.ts';

/** Telegram's limit on the text of one message. */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;

export interface TelegramConnectorDeps {
  clock: Clock;
  logger: Logger;
  /** Where `botTokenEnv` is looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The bot's command menu, registered with setMyCommands at start (the commands are handled above channels/). */
  commands?: readonly BotCommandSpec[];
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
}

/** grammY types signals as its abort-controller polyfill; Node's own AbortSignal is what its fetch gets at run time. */
type ApiSignal = NonNullable<Parameters<Bot['api']['getMe']>[0]>;

type SendOptions = {
  message_thread_id?: number;
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
};

function chatId(chat: string): number | string {
  return /^-?\d+$/.test(chat) ? Number(chat) : chat;
}

/** A Telegram bot as a Connector. Build it with `createTelegramConnector`. */
export class TelegramConnector implements Connector {
  readonly channel = 'telegram';
  readonly maxMessageLength = TELEGRAM_MAX_MESSAGE_LENGTH;
  /** The Bot API has no idempotency key: a send a crash interrupted cannot be told apart from one that went out. */
  readonly idempotent = false;
  #config: TelegramChannelConfig;
  #deps: TelegramConnectorDeps;
  #logger: Logger;
  #token: string;
  #bot: Bot;
  #allowed: Set<number>;
  #running = false;
  #ready = false;
  #username: string | undefined;
  #abort = new AbortController();
  #stop = new StopSignal();
  #loop: Promise<void> | null = null;
  /** The next update id to ask for: every update below it was handled. Undefined until one was. */
  #offset: number | undefined;

  constructor(config: TelegramChannelConfig, deps: TelegramConnectorDeps) {
    this.#config = config;
    this.#deps = deps;
    this.#logger = deps.logger.child({ channel: 'telegram' });
    this.#token = resolveBotToken(config, deps.env);
    // Every Bot API call ends within the long-poll timeout plus `requestTimeoutSeconds`.
    const timeoutSeconds = config.pollTimeoutSeconds + config.requestTimeoutSeconds;
    this.#bot = new Bot(this.#token, {
      client: { timeoutSeconds, ...(config.apiRoot ? { apiRoot: config.apiRoot } : {}) },
    });
    this.#allowed = new Set(config.allowedUserIds);
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
      this.#logger.warn('channels.telegram.allowedUserIds is empty: every sender will be refused');
    try {
      await this.#setup();
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 401) {
        this.#running = false;
        throw new AppError(
          'invalid_input',
          `Telegram refused the bot token (401 Unauthorized): check ${this.#tokenSource()}`,
          'channels.telegram.botToken',
        );
      }
      this.#logger.warn(
        { err: describeTelegramError(error, this.#token) },
        'Telegram not reachable yet; retrying in the background',
      );
    }
    this.#loop = this.#poll(onMessage).catch((error: unknown) => {
      this.#logger.error(
        { err: describeTelegramError(error, this.#token) },
        'Telegram polling stopped by an unexpected error',
      );
    });
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

  /** Sends one message (at most 4096 characters) as MarkdownV2, or as plain text if Telegram cannot parse it. */
  async send(target: ChannelTarget, message: OutboundMessage): Promise<void> {
    if (message.text.length > this.maxMessageLength) {
      throw new DeliveryError(
        `message of ${message.text.length} characters exceeds Telegram's ${this.maxMessageLength}`,
        { kind: 'permanent' },
      );
    }
    const options = this.#sendOptions(target, message.replyTo);
    if (this.#config.format === 'markdown') {
      try {
        await this.#bot.api.sendMessage(chatId(target.chat), toMarkdownV2(message.text), {
          ...options,
          parse_mode: 'MarkdownV2',
        });
        return;
      } catch (error) {
        if (!isEntityParseError(error)) throw toDeliveryError(error, this.#token);
        this.#logger.warn(
          { chat: target.chat, err: describeTelegramError(error, this.#token) },
          'Telegram refused the formatting; sending plain text',
        );
      }
    }
    try {
      await this.#bot.api.sendMessage(chatId(target.chat), message.text, options);
    } catch (error) {
      throw toDeliveryError(error, this.#token);
    }
  }

  /** Shows "typing…" in the chat (best effort: failures are only logged). */
  async typing(target: ChannelTarget): Promise<void> {
    try {
      const thread = this.#sendOptions(target, undefined).message_thread_id;
      await this.#bot.api.sendChatAction(
        chatId(target.chat),
        'typing',
        thread === undefined ? {} : { message_thread_id: thread },
      );
    } catch (error) {
      this.#logger.debug(
        { chat: target.chat, err: describeTelegramError(error, this.#token) },
        'typing indicator failed',
      );
    }
  }

  #signal(): ApiSignal {
    return this.#abort.signal as unknown as ApiSignal;
  }

  #tokenSource(): string {
    return this.#config.botToken
      ? 'channels.telegram.botToken'
      : `the environment variable ${this.#config.botTokenEnv}`;
  }

  #sendOptions(target: ChannelTarget, replyTo: string | undefined): SendOptions {
    const options: SendOptions = {};
    if (target.thread && /^\d+$/.test(target.thread)) options.message_thread_id = Number(target.thread);
    const reply = replyMessageId(replyTo, target.chat);
    if (reply !== undefined) options.reply_parameters = { message_id: reply, allow_sending_without_reply: true };
    return options;
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
        const request = { timeout: this.#config.pollTimeoutSeconds, allowed_updates: ['message' as const] };
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
        if (!this.#running || !(await this.#handleUpdate(update, onMessage))) return;
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

  /** Handles one update; true when it is done with (its offset may be confirmed), false when stopped before that. */
  async #handleUpdate(update: TelegramUpdate, onMessage: InboundHandler): Promise<boolean> {
    const message = update.message;
    if (!message?.from) return true;
    const target = targetOf(message);
    if (!this.#allowed.has(message.from.id)) {
      this.#logger.warn(
        { userId: message.from.id, chat: message.chat.id },
        'message from a user not on channels.telegram.allowedUserIds refused',
      );
      await this.#replyDirect(target, refusalText(message.from.id));
      return true;
    }
    const inbound = toInbound(message);
    if (!inbound) {
      await this.#replyDirect(target, TEXT_ONLY_TEXT);
      return true;
    }
    for (let attempt = 1; ; attempt += 1) {
      try {
        return !(await this.#stop.race(onMessage(inbound))).stopped;
      } catch (error) {
        if (!this.#running) return false;
        const err = error instanceof Error ? error.message : String(error);
        if (attempt >= this.#config.inboundMaxAttempts) {
          this.#logger.error(
            { messageId: inbound.id, attempts: attempt, err },
            'inbound message could not be accepted; the sender was told',
          );
          await this.#replyDirect(target, notAcceptedText());
          return true;
        }
        this.#logger.warn({ messageId: inbound.id, attempt, err }, 'inbound message not accepted yet; retrying');
        await this.#sleep(this.#retryDelay(attempt));
        if (!this.#running) return false;
      }
    }
  }

  /** A plain-text reply sent by the connector itself (refusals, notices); failures are logged, not retried. */
  async #replyDirect(target: ChannelTarget, text: string): Promise<void> {
    try {
      await this.#bot.api.sendMessage(chatId(target.chat), text, this.#sendOptions(target, undefined), this.#signal());
    } catch (error) {
      this.#logger.warn(
        { chat: target.chat, err: describeTelegramError(error, this.#token) },
        'could not send a reply',
      );
    }
  }
}

/**
 * Builds the Telegram connector from `config.channels.telegram` (call it only when the channel is enabled). Throws an
 * invalid_input error naming `channels.telegram.botToken` when there is no usable token. Register the result on the
 * Outbox and `start(onMessage)` it.
 */
export function createTelegramConnector(config: TelegramChannelConfig, deps: TelegramConnectorDeps): TelegramConnector {
  return new TelegramConnector(config, deps);
}

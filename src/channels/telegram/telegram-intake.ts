// The Telegram connector's intake: one update at a time, a typed message or a button press, through the allow-list and
// handed to the InboundHandler (retried with backoff, then the sender is told); a command addressed to another bot is
// left alone. The caller advances the update offset only once `handle` says the update is done with, i.e. after the
// handler resolved. Every press is answered (answerCallbackQuery) so its button stops spinning: empty once accepted,
// with a notice when refused or not accepted.
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { InboundHandler } from '../connector.ts';
import { handOff } from '../hand-off.ts';
import type { StopSignal } from '../stop-signal.ts';
import type { TelegramCallbackQuery, TelegramMessage, TelegramUpdate } from './telegram-inbound.ts';
import {
  addressedElsewhere,
  notAcceptedText,
  PRESS_NOT_ACCEPTED_TEXT,
  pressRefusalText,
  pressToInbound,
  refusalText,
  targetOf,
  TEXT_ONLY_TEXT,
  toInbound,
} from './telegram-inbound.ts';
import type { ApiSignal, TelegramOutbound } from './telegram-outbound.ts';

/** What the intake needs from its connector. */
export interface IntakeDeps {
  clock: Clock;
  logger: Logger;
  outbound: TelegramOutbound;
  /** Telegram user ids allowed to talk to the bot. */
  allowed: ReadonlySet<number>;
  /** The bot's own username, once Telegram told it (commands addressed to another bot are left alone). */
  botUsername: () => string | undefined;
  /** The bot's account name, when it is a named one (refusals name its allow-list key). */
  account?: string;
  /** Attempts at handing one message over before the sender is told it could not be accepted. */
  maxAttempts: number;
  /** False once the connector is stopping. */
  running: () => boolean;
  /** The current run's stop signal (a hand-off in flight is abandoned when it fires). */
  stopSignal: () => StopSignal;
  /** The current run's abort signal for Bot API calls. */
  apiSignal: () => ApiSignal;
  /** How long to wait before hand-off attempt `attempt + 1`. */
  retryDelay: (attempt: number) => number;
}

/** Handles updates for one connector. */
export class TelegramIntake {
  #deps: IntakeDeps;

  constructor(deps: IntakeDeps) {
    this.#deps = deps;
  }

  /** Handles one update; true when it is done with (its offset may be confirmed), false when stopped before that. */
  async handle(update: TelegramUpdate, onMessage: InboundHandler): Promise<boolean> {
    if (update.callback_query) return this.#press(update.callback_query, onMessage);
    if (update.message) return this.#message(update.message, onMessage);
    return true;
  }

  async #message(message: TelegramMessage, onMessage: InboundHandler): Promise<boolean> {
    if (!message.from) return true;
    const { logger, outbound } = this.#deps;
    if (addressedElsewhere(message.text, this.#deps.botUsername())) {
      logger.debug({ chat: message.chat.id }, 'a command addressed to another bot; left alone');
      return true;
    }
    const target = targetOf(message);
    if (!this.#deps.allowed.has(message.from.id)) {
      logger.warn(
        { userId: message.from.id, chat: message.chat.id },
        'message from a user not on channels.telegram.allowedUserIds refused',
      );
      await outbound.replyDirect(target, refusalText(message.from.id, this.#deps.account), this.#deps.apiSignal());
      return true;
    }
    const inbound = toInbound(message);
    if (!inbound) {
      await outbound.replyDirect(target, TEXT_ONLY_TEXT, this.#deps.apiSignal());
      return true;
    }
    const outcome = await handOff(inbound, onMessage, this.#deps);
    if (outcome === 'given-up') await outbound.replyDirect(target, notAcceptedText(), this.#deps.apiSignal());
    return outcome !== 'stopped';
  }

  async #press(query: TelegramCallbackQuery, onMessage: InboundHandler): Promise<boolean> {
    const { logger, outbound } = this.#deps;
    if (!this.#deps.allowed.has(query.from.id)) {
      logger.warn(
        { userId: query.from.id, chat: query.message?.chat.id },
        'button press from a user not on channels.telegram.allowedUserIds refused',
      );
      await outbound.answer(
        query.id,
        this.#deps.apiSignal(),
        pressRefusalText(query.from.id, this.#deps.account),
        true,
      );
      return true;
    }
    const inbound = pressToInbound(query, this.#deps.clock.now());
    if (!inbound) {
      await outbound.answer(query.id, this.#deps.apiSignal());
      return true;
    }
    const outcome = await handOff(inbound, onMessage, this.#deps);
    if (outcome === 'stopped') return false;
    if (outcome === 'given-up') await outbound.answer(query.id, this.#deps.apiSignal(), PRESS_NOT_ACCEPTED_TEXT, true);
    else await outbound.answer(query.id, this.#deps.apiSignal());
    return true;
  }
}

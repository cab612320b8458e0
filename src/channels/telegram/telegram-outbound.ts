// What the Telegram connector sends: messages (MarkdownV2, or plain text when Telegram cannot parse it) with their
// buttons as an inline keyboard, files as documents (sendDocument, the text as the caption when it fits), edits of those messages (editMessageText), the "typing…" action, the connector's own
// replies and the answers to button presses (answerCallbackQuery).
import type { Api } from 'grammy';
import { InputFile } from 'grammy';
import type { Logger } from '../../core/logger.ts';
import type { ChannelTarget, ChatButton, OutboundFile, OutboundMessage, SentMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { EditRefusedError } from '../outbox-edit.ts';
import { toMarkdownV2 } from './markdown-v2.ts';
import {
  describeTelegramError,
  isEditRefusedError,
  isEntityParseError,
  isNotModifiedError,
  toDeliveryError,
} from './telegram-errors.ts';
import { replyMessageId } from './telegram-inbound.ts';

/** Telegram's limit on the text of one message. */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;
/** Telegram's limit on the caption of a document (the text sent with it). */
export const TELEGRAM_MAX_CAPTION_LENGTH = 1024;
/** Telegram's limit on a button's callback_data, in bytes. */
export const TELEGRAM_MAX_CALLBACK_DATA_BYTES = 64;
/** Telegram's limit on the text of a callback answer. */
const MAX_ANSWER_LENGTH = 200;

/** grammY types signals as its abort-controller polyfill; Node's own AbortSignal is what its fetch gets at run time. */
export type ApiSignal = NonNullable<Parameters<Api['getMe']>[0]>;

type InlineKeyboard = { text: string; callback_data: string }[][];

type SendOptions = {
  message_thread_id?: number;
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
};

/** A Telegram chat id from a target's chat: a number when it is one, else the @username. */
export function chatId(chat: string): number | string {
  return /^-?\d+$/.test(chat) ? Number(chat) : chat;
}

/**
 * Rows of buttons as an inline keyboard (each button's command is its callback_data); undefined for none. Throws a
 * permanent DeliveryError for a button Telegram would refuse (empty label, callback_data empty or over 64 bytes).
 */
export function inlineKeyboard(buttons: ChatButton[][] | undefined): InlineKeyboard | undefined {
  if (!buttons || buttons.length === 0) return undefined;
  return buttons.map((row) =>
    row.map((button) => {
      const bytes = Buffer.byteLength(button.command, 'utf8');
      if (button.label.trim() === '' || bytes === 0 || bytes > TELEGRAM_MAX_CALLBACK_DATA_BYTES) {
        throw new DeliveryError(
          `button "${button.label}": a label and a command of 1-${TELEGRAM_MAX_CALLBACK_DATA_BYTES} bytes are needed (the command has ${bytes})`,
          { kind: 'permanent' },
        );
      }
      return { text: button.label, callback_data: button.command };
    }),
  );
}

/** Telegram's outbound calls for one bot. */
export class TelegramOutbound {
  #api: Api;
  #format: 'markdown' | 'plain';
  #logger: Logger;
  #token: string;

  constructor(api: Api, options: { format: 'markdown' | 'plain'; logger: Logger; token: string }) {
    this.#api = api;
    this.#format = options.format;
    this.#logger = options.logger;
    this.#token = options.token;
  }

  /**
   * Sends one message (at most 4096 characters) with its buttons, and its file as a document (see `#sendDocument`);
   * resolves to its message id (the document's, with a file) as the ref.
   */
  async send(target: ChannelTarget, message: OutboundMessage): Promise<SentMessage> {
    this.#checkLength(message.text);
    if (message.file) return this.#sendDocument(target, message, message.file);
    const keyboard = inlineKeyboard(message.buttons);
    const options = {
      ...this.sendOptions(target, message.replyTo),
      ...(keyboard ? { reply_markup: { inline_keyboard: keyboard } } : {}),
    };
    try {
      const sent = await this.#formatted(target, message.text, (text, mode) =>
        this.#api.sendMessage(chatId(target.chat), text, { ...options, ...mode }),
      );
      return { ref: String(sent.message_id) };
    } catch (error) {
      throw toDeliveryError(error, this.#token);
    }
  }

  /**
   * Replaces the text and buttons of message `ref` (no buttons: the keyboard is removed). An unchanged message counts
   * as edited; a message Telegram will not edit any more (deleted, too old) throws EditRefusedError.
   */
  async edit(target: ChannelTarget, ref: string, message: OutboundMessage): Promise<void> {
    if (!/^\d+$/.test(ref)) throw new EditRefusedError(`"${ref}" is not a Telegram message id`);
    this.#checkLength(message.text);
    const markup = { inline_keyboard: inlineKeyboard(message.buttons) ?? [] };
    try {
      await this.#formatted(target, message.text, (text, mode) =>
        this.#api.editMessageText(chatId(target.chat), Number(ref), text, { ...mode, reply_markup: markup }),
      );
    } catch (error) {
      if (isNotModifiedError(error)) {
        this.#logger.debug({ chat: target.chat, ref }, 'message already shows this text and these buttons');
        return;
      }
      const described = describeTelegramError(error, this.#token);
      if (isEditRefusedError(error)) throw new EditRefusedError(described, { status: 400, cause: error });
      throw toDeliveryError(error, this.#token);
    }
  }

  /**
   * Sends `file` as a document (a multipart upload of its bytes under its name) with the text as its caption (none for
   * an empty text) and the buttons under it. A text over Telegram's 1,024 characters is refused for good: the outbox
   * sends such a text as a message of its own first (`maxFileCaptionLength`).
   */
  async #sendDocument(target: ChannelTarget, message: OutboundMessage, file: OutboundFile): Promise<SentMessage> {
    if (message.text.length > TELEGRAM_MAX_CAPTION_LENGTH) {
      throw new DeliveryError(
        `caption of ${message.text.length} characters exceeds Telegram's ${TELEGRAM_MAX_CAPTION_LENGTH}`,
        { kind: 'permanent' },
      );
    }
    const keyboard = inlineKeyboard(message.buttons);
    const options = {
      ...this.sendOptions(target, message.replyTo),
      ...(keyboard ? { reply_markup: { inline_keyboard: keyboard } } : {}),
    };
    // A fresh InputFile per call: the plain-text retry of a caption Telegram could not parse uploads it again.
    const document = (): InputFile => new InputFile(Buffer.from(file.content, 'utf8'), file.name);
    const chat = chatId(target.chat);
    try {
      const sent =
        message.text === ''
          ? await this.#api.sendDocument(chat, document(), options)
          : await this.#formatted(target, message.text, (caption, mode) =>
              this.#api.sendDocument(chat, document(), { ...options, caption, ...mode }),
            );
      return { ref: String(sent.message_id) };
    } catch (error) {
      throw toDeliveryError(error, this.#token);
    }
  }

  /** Shows "typing…" in the chat (best effort: failures are only logged). */
  async typing(target: ChannelTarget): Promise<void> {
    try {
      const thread = this.sendOptions(target, undefined).message_thread_id;
      await this.#api.sendChatAction(
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

  /** A plain-text reply sent by the connector itself (refusals, notices); failures are logged, not retried. */
  async replyDirect(target: ChannelTarget, text: string, signal: ApiSignal): Promise<void> {
    try {
      await this.#api.sendMessage(chatId(target.chat), text, this.sendOptions(target, undefined), signal);
    } catch (error) {
      this.#logger.warn(
        { chat: target.chat, err: describeTelegramError(error, this.#token) },
        'could not send a reply',
      );
    }
  }

  /**
   * Answers a button press so the button stops spinning, with an optional notice (an alert when `alert`); failures
   * (a press answered too late) are logged, not retried.
   */
  async answer(queryId: string, signal: ApiSignal, text?: string, alert = false): Promise<void> {
    const options = text ? { text: text.slice(0, MAX_ANSWER_LENGTH), show_alert: alert } : {};
    try {
      await this.#api.answerCallbackQuery(queryId, options, signal);
    } catch (error) {
      this.#logger.warn({ err: describeTelegramError(error, this.#token) }, 'could not answer a button press');
    }
  }

  /** The thread and reply options of a message to `target`. */
  sendOptions(target: ChannelTarget, replyTo: string | undefined): SendOptions {
    const options: SendOptions = {};
    if (target.thread && /^\d+$/.test(target.thread)) options.message_thread_id = Number(target.thread);
    const reply = replyMessageId(replyTo, target.chat);
    if (reply !== undefined) options.reply_parameters = { message_id: reply, allow_sending_without_reply: true };
    return options;
  }

  #checkLength(text: string): void {
    if (text.length > TELEGRAM_MAX_MESSAGE_LENGTH) {
      throw new DeliveryError(
        `message of ${text.length} characters exceeds Telegram's ${TELEGRAM_MAX_MESSAGE_LENGTH}`,
        {
          kind: 'permanent',
        },
      );
    }
  }

  /** Makes `call` with the text as MarkdownV2, or as plain text if Telegram cannot parse that (or format is plain). */
  async #formatted<T>(
    target: ChannelTarget,
    text: string,
    call: (text: string, mode: { parse_mode?: 'MarkdownV2' }) => Promise<T>,
  ): Promise<T> {
    if (this.#format === 'markdown') {
      try {
        return await call(toMarkdownV2(text), { parse_mode: 'MarkdownV2' });
      } catch (error) {
        if (!isEntityParseError(error)) throw error;
        this.#logger.warn(
          { chat: target.chat, err: describeTelegramError(error, this.#token) },
          'Telegram refused the formatting; sending plain text',
        );
      }
    }
    return call(text, {});
  }
}

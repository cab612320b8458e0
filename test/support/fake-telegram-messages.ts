// Messages of the fake Telegram Bot API: how the text of a sendMessage or editMessageText is read (MarkdownV2 parsed
// as Telegram parses it, empty and too-long texts refused), and the Message objects Telegram answers with.
import type { SentDocument } from './fake-telegram-documents.ts';
import { documentFields } from './fake-telegram-documents.ts';
import type { FakeButton } from './fake-telegram-keyboards.ts';
import { markupField } from './fake-telegram-keyboards.ts';
import type { ParsedEntity } from './fake-telegram-markdown.ts';
import { parseMarkdownV2 } from './fake-telegram-markdown.ts';
import type { Params } from './fake-telegram-wire.ts';

/** A message the bot sent, as the fake understood it. */
export interface SentMessage {
  messageId: number;
  chatId: string;
  /** The text exactly as sent (with MarkdownV2 markup and escapes). */
  rawText: string;
  /** The text a user sees (markup parsed away). */
  text: string;
  parseMode: string | undefined;
  entities: ParsedEntity[];
  threadId: number | undefined;
  replyToMessageId: number | undefined;
  /** The inline keyboard under the message (its latest, after edits); undefined when it has none. */
  keyboard: FakeButton[][] | undefined;
  /** For a sendDocument: the file (`text` is then its caption, empty when none). */
  document?: SentDocument;
}

/** The text of a call as Telegram reads it. */
export type ReadText =
  | { ok: true; raw: string; text: string; parseMode: string | undefined; entities: ParsedEntity[] }
  | { ok: false; error: string };

/** Reads the text of a sendMessage or editMessageText as Telegram does, or the error it answers. */
export function readText(params: Params): ReadText {
  const raw = typeof params.text === 'string' ? params.text : '';
  const parseMode = typeof params.parse_mode === 'string' && params.parse_mode !== '' ? params.parse_mode : undefined;
  let text = raw;
  let entities: ParsedEntity[] = [];
  if (parseMode !== undefined) {
    if (parseMode !== 'MarkdownV2') return { ok: false, error: 'Bad Request: unsupported parse_mode' };
    const parsed = parseMarkdownV2(raw);
    if (!parsed.ok) return { ok: false, error: `Bad Request: can't parse entities: ${parsed.error}` };
    text = parsed.text;
    entities = parsed.entities;
  }
  if (text.trim() === '') return { ok: false, error: 'Bad Request: message text is empty' };
  if ([...text].length > 4096) return { ok: false, error: 'Bad Request: message is too long' };
  return { ok: true, raw, text, parseMode, entities };
}

/** The Chat object of a chat id: a private chat for a positive id, a supergroup otherwise. */
export function chatObject(chatId: number): Record<string, unknown> {
  return chatId > 0
    ? { id: chatId, type: 'private', first_name: 'User' }
    : { id: chatId, type: 'supergroup', title: 'Test group' };
}

/** A message the bot (`from`) sent, as the Message object Telegram returns (and puts in a callback query). */
export function messageObject(sent: SentMessage, from: Record<string, unknown>): Record<string, unknown> {
  return {
    message_id: sent.messageId,
    from,
    chat: chatObject(Number(sent.chatId)),
    date: Math.floor(Date.now() / 1000),
    ...(sent.document
      ? documentFields(sent.messageId, sent.document, sent.text, sent.entities)
      : { text: sent.text, ...(sent.entities.length > 0 ? { entities: sent.entities } : {}) }),
    ...(sent.threadId !== undefined ? { message_thread_id: sent.threadId, is_topic_message: true } : {}),
    ...markupField(sent.keyboard),
  };
}

// Documents for the fake Telegram Bot API (sendDocument): the file read from the multipart upload the way Telegram reads
// it (`document` = `attach://<part>` naming a file part, or the file part itself; an empty file or a file id the fake
// never issued refused), and the caption checked like a message text (MarkdownV2, at most 1024 characters).
import type { ParsedEntity } from './fake-telegram-markdown.ts';
import { parseMarkdownV2 } from './fake-telegram-markdown.ts';
import type { FakeUpload, Params } from './fake-telegram-wire.ts';
import { isUpload } from './fake-telegram-wire.ts';

/** A document the bot sent: the file's name, type and bytes, and its text (UTF-8) for tests to compare. */
export interface SentDocument {
  fileName: string;
  contentType: string;
  bytes: Buffer;
  /** The bytes as UTF-8 text. */
  content: string;
}

/** A sendDocument as Telegram reads it: the document and its caption (empty when none), or the error it answers. */
export type ReadDocument =
  | {
      ok: true;
      document: SentDocument;
      raw: string;
      text: string;
      parseMode: string | undefined;
      entities: ParsedEntity[];
    }
  | { ok: false; error: string };

const MAX_CAPTION_LENGTH = 1024;

function uploadOf(params: Params): FakeUpload | string {
  const value = params.document;
  if (isUpload(value)) return value;
  if (typeof value !== 'string' || value === '') return 'Bad Request: there is no document in the request';
  const attached = /^attach:\/\/(.+)$/.exec(value)?.[1];
  const part = attached === undefined ? undefined : params[attached];
  return isUpload(part) ? part : 'Bad Request: wrong file identifier/HTTP URL specified';
}

/** Reads the document and caption of a sendDocument call, or Telegram's error for it. */
export function readDocument(params: Params): ReadDocument {
  const upload = uploadOf(params);
  if (typeof upload === 'string') return { ok: false, error: upload };
  if (upload.bytes.length === 0) return { ok: false, error: 'Bad Request: file must be non-empty' };
  const raw = typeof params.caption === 'string' ? params.caption : '';
  const parseMode = typeof params.parse_mode === 'string' && params.parse_mode !== '' ? params.parse_mode : undefined;
  let text = raw;
  let entities: ParsedEntity[] = [];
  if (parseMode !== undefined && raw !== '') {
    if (parseMode !== 'MarkdownV2') return { ok: false, error: 'Bad Request: unsupported parse_mode' };
    const parsed = parseMarkdownV2(raw);
    if (!parsed.ok) return { ok: false, error: `Bad Request: can't parse entities: ${parsed.error}` };
    text = parsed.text;
    entities = parsed.entities;
  }
  if ([...text].length > MAX_CAPTION_LENGTH) return { ok: false, error: 'Bad Request: message caption is too long' };
  const document = {
    fileName: upload.fileName,
    contentType: upload.contentType,
    bytes: upload.bytes,
    content: upload.bytes.toString('utf8'),
  };
  return { ok: true, document, raw, text, parseMode, entities };
}

/** The `document` and `caption` fields of the Message object Telegram returns for a sent document. */
export function documentFields(
  messageId: number,
  document: SentDocument,
  caption: string,
  entities: ParsedEntity[],
): Record<string, unknown> {
  return {
    document: {
      file_name: document.fileName,
      mime_type: document.contentType,
      file_id: `fake-document-${messageId}`,
      file_unique_id: `fake-unique-${messageId}`,
      file_size: document.bytes.length,
    },
    ...(caption !== '' ? { caption } : {}),
    ...(entities.length > 0 ? { caption_entities: entities } : {}),
  };
}

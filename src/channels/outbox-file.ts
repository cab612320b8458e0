// A message's file as the outbox takes, stores and delivers it: validated and bounded when recorded (JSON in the
// row's `file` column), given to a connector with `files` on the message's last part, or turned into inline text (the
// sender's `inline` form, else the text and the content in a code fence, cut to what a chat holds) everywhere else.
import { z } from 'zod';
import type { OutboundFile } from './connector.ts';

/** The largest file a message carries, in bytes of UTF-8 (a larger one is cut at a line with a note saying so). */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** The most of a file's content the default inline form shows, in bytes (about six Telegram messages). */
export const MAX_INLINE_FILE_BYTES = 24 * 1024;

/** Validates a file given to `Outbox.send`: a plain name, a MIME type and content that is not empty. */
export const outboundFileSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(200)
    // eslint-disable-next-line no-control-regex -- control characters are exactly what the name must not hold
    .regex(/^[^/\\\u0000-\u001f\u007f]+$/, 'a file name without path separators or control characters')
    .refine((name) => name !== '.' && name !== '..', 'a file name, not "." or ".."'),
  contentType: z.string().regex(/^[\w.+-]+\/[\w.+-]+(?:;\s*[\w.+-]+=[\w.+-]+)*$/, 'a MIME type such as text/x-diff'),
  content: z.string().min(1, 'must not be empty'),
  inline: z.string().min(1).optional(),
});

/**
 * Cuts `text` to at most `maxBytes` bytes of UTF-8 at the end of a line (or at a character when the first line alone
 * is longer). Returns the text unchanged when it fits.
 */
export function cutAtLine(text: string, maxBytes: number): { text: string; cut: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, cut: false };
  // Decoding a byte prefix may end in half a character; the replacement character it leaves is dropped.
  const head = Buffer.from(text)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  const end = head.lastIndexOf('\n');
  return { text: end >= 0 ? head.slice(0, end + 1) : head, cut: true };
}

/** The file as recorded: content over MAX_FILE_BYTES cut at a line, with a last line saying how much was left out. */
export function boundedFile(file: OutboundFile): OutboundFile {
  const bytes = Buffer.byteLength(file.content);
  const note = `\n[cut by switchboard: the file has ${bytes} bytes, more than the ${MAX_FILE_BYTES} a message carries]\n`;
  const cut = cutAtLine(file.content, MAX_FILE_BYTES - Buffer.byteLength(note));
  return cut.cut ? { ...file, content: `${cut.text}${note}` } : file;
}

/** The file of a stored row (its `file` column), or undefined for none. */
export function storedFile(json: string | null): OutboundFile | undefined {
  if (json === null) return undefined;
  return outboundFileSchema.parse(JSON.parse(json));
}

/**
 * `content` in a Markdown code fence (with `language`), the fence longer than any backtick run that opens a line of
 * it, so no line closes the fence early.
 */
export function fencedCode(content: string, language = ''): string {
  let longest = 2;
  for (const match of content.matchAll(/^ {0,3}(`+)/gm)) longest = Math.max(longest, match[1]?.length ?? 0);
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${content.endsWith('\n') ? content : `${content}\n`}${fence}`;
}

/**
 * What a connector without files gets for a message with `file`: the sender's `inline` form, else `text` followed by
 * the content in a code fence (`diff` for a patch), cut to MAX_INLINE_FILE_BYTES with a line saying so.
 */
export function inlineText(text: string, file: OutboundFile): string {
  if (file.inline !== undefined) return file.inline;
  const cut = cutAtLine(file.content, MAX_INLINE_FILE_BYTES);
  const language = /\.(?:patch|diff)$/i.test(file.name) ? 'diff' : '';
  const note = cut.cut ? `\n(${file.name} was cut: it is larger than a chat message holds.)` : '';
  return `${text}\n\n${fencedCode(cut.text, language)}${note}`;
}

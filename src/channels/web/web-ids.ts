import { z } from 'zod';

/** The channel name of the web page connector (targets are `web|<chatId>`). */
export const WEB_CHANNEL = 'web';

/** The sender id of every web message: whoever holds the page is the daemon's owner (see gateway/web-auth.ts). */
export const WEB_USER_ID = 'local';

/** A chat id a page generates and keeps (8–64 letters, digits, `_` or `-`). */
export const chatIdSchema = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 letters, digits, "_" or "-"');

/** A message id a page generates for each message it sends, so that a retry is recognised. */
export const clientMessageIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 letters, digits, "_" or "-"');

/** The connector-unique InboundMessage id of a page's message: chat and client id together. */
export function inboundMessageId(chatId: string, clientId: string): string {
  return `${chatId}:${clientId}`;
}

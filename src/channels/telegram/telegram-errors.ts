import { GrammyError, HttpError } from 'grammy';
import { DeliveryError } from '../delivery-error.ts';
import { redactToken } from './telegram-token.ts';

/** True when Telegram refused a message because its MarkdownV2 did not parse (400 "can't parse entities"). */
export function isEntityParseError(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /can't parse entities/i.test(error.description);
}

/** True when Telegram refused an edit because the message already has that text and those buttons. */
export function isNotModifiedError(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
}

/**
 * True when Telegram refused, for good, to edit a message: it was deleted ("message to edit not found"), is too old or
 * not the bot's ("message can't be edited"), or the id names none.
 */
export function isEditRefusedError(error: unknown): boolean {
  return (
    error instanceof GrammyError &&
    error.error_code === 400 &&
    /message to edit not found|message can't be edited|MESSAGE_ID_INVALID/i.test(error.description)
  );
}

/** A one-line description of a Bot API failure, safe to log (never the token, never a request URL). */
export function describeTelegramError(error: unknown, token: string): string {
  if (error instanceof GrammyError) return `${error.method}: ${error.error_code} ${error.description}`;
  // grammY keeps the underlying fetch error (whose message may hold the URL, hence the token) in `error`; we only use
  // its own message, which names the method, plus the inner error's code when there is one.
  if (error instanceof HttpError) {
    const inner = error.error as { code?: unknown; name?: unknown } | undefined;
    const detail = typeof inner?.code === 'string' ? inner.code : typeof inner?.name === 'string' ? inner.name : '';
    return redactToken(detail ? `${error.message} (${detail})` : error.message, token);
  }
  return redactToken(error instanceof Error ? error.message : String(error), token);
}

/**
 * Classifies a failed Bot API call for the Outbox: 429 → rate_limited with the server's retry_after; 5xx, 409, 401 and
 * network errors → transient; other 4xx (chat not found, bot blocked, bad request, group migrated) → permanent.
 */
export function toDeliveryError(error: unknown, token: string): DeliveryError {
  const message = describeTelegramError(error, token);
  if (error instanceof GrammyError) {
    const status = error.error_code;
    if (status === 429) {
      const seconds = error.parameters.retry_after ?? 1;
      return new DeliveryError(message, { kind: 'rate_limited', status, retryAfterMs: seconds * 1000 });
    }
    if (status >= 500 || status === 409 || status === 401)
      return new DeliveryError(message, { kind: 'transient', status });
    const migrated = error.parameters.migrate_to_chat_id;
    const text = migrated === undefined ? message : `${message} (the group is now chat ${migrated})`;
    return new DeliveryError(text, { kind: 'permanent', status });
  }
  return new DeliveryError(message, { kind: 'transient' });
}

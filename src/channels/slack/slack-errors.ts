// Failures of Slack Web API calls (thrown by @slack/web-api's WebClient) classified for the outbox: a 429 with its
// Retry-After as `rate_limited`, Slack's own transient errors and network failures as `transient`, every other
// platform error (channel_not_found, not_in_channel, invalid_blocks, …) as `permanent`.
import { webApi } from '@slack/bolt';
import { DeliveryError } from '../delivery-error.ts';
import { EditRefusedError } from '../outbox-edit.ts';

/** Platform errors that may pass on their own. */
const TRANSIENT = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
  'team_added_to_org',
]);

/** chat.update errors that mean the message will never be edited (deleted, too old, not the bot's). */
const EDIT_REFUSED = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed', 'msg_too_long']);

/** The Slack error code of a platform error (`channel_not_found`, …), else undefined. */
export function platformError(error: unknown): string | undefined {
  return error instanceof Error && (error as { code?: unknown }).code === webApi.ErrorCode.PlatformError
    ? String((error as { data?: { error?: unknown } }).data?.error ?? '')
    : undefined;
}

/** A short description of a Web API failure for a log line (no token: the WebClient never puts it in messages). */
export function describeSlackError(error: unknown): string {
  const code = platformError(error);
  if (code) return `Slack refused the call: ${code}`;
  return error instanceof Error ? error.message : String(error);
}

/** Classifies a failed chat.postMessage (or chat.update) as a DeliveryError; `edit` marks edit refusals as such. */
export function toDeliveryError(error: unknown, edit = false): DeliveryError {
  if (error instanceof DeliveryError) return error;
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  const message = describeSlackError(error);
  if (code === webApi.ErrorCode.RateLimitedError) {
    const seconds = Number((error as { retryAfter?: unknown }).retryAfter);
    return new DeliveryError(`Slack rate limit: retry after ${seconds}s`, {
      kind: 'rate_limited',
      status: 429,
      retryAfterMs: Number.isFinite(seconds) ? Math.max(0, seconds) * 1000 : 1000,
      cause: error,
    });
  }
  if (code === webApi.ErrorCode.HTTPError) {
    const status = Number((error as { statusCode?: unknown }).statusCode);
    return new DeliveryError(message, { kind: status >= 500 ? 'transient' : 'permanent', status, cause: error });
  }
  const platform = platformError(error);
  if (platform !== undefined) {
    if (edit && EDIT_REFUSED.has(platform)) return new EditRefusedError(message, { cause: error });
    return new DeliveryError(message, { kind: TRANSIENT.has(platform) ? 'transient' : 'permanent', cause: error });
  }
  return new DeliveryError(message, { kind: 'transient', cause: error });
}

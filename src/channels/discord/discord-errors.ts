// Discord REST failures as the Outbox sees them. discord.js's REST (@discordjs/rest) queues requests by rate-limit
// bucket; the connector asks it to reject instead of waiting on the routes it delivers through, so a 429 (or a bucket
// known to be empty) surfaces here as a RateLimitError and becomes a `rate_limited` DeliveryError with its wait.
import { DiscordAPIError, HTTPError, RateLimitError } from 'discord.js';
import { DeliveryError } from '../delivery-error.ts';

/** Discord's JSON error codes the connector tells apart. */
export const DiscordCode = {
  unknownChannel: 10003,
  unknownMessage: 10008,
  unknownWebhook: 10015,
  unknownInteraction: 10062,
  cannotEditOthers: 50005,
  wrongChannelType: 50024,
  invalidWebhookToken: 50027,
  alreadyAcknowledged: 40060,
  threadExists: 160004,
} as const;

/** The Discord error code of a REST failure, when it has one. */
export function discordCode(error: unknown): number | undefined {
  return error instanceof DiscordAPIError && typeof error.code === 'number' ? error.code : undefined;
}

/**
 * A one-line description of a REST failure, safe to log: method, status, Discord's code and message; never the URL
 * (an interaction's token is part of its callback and webhook URLs) and never the bot token.
 */
export function describeDiscordError(error: unknown): string {
  if (error instanceof RateLimitError)
    return `${error.method.toUpperCase()} ${error.route}: rate limited (retry after ${waitOf(error)} ms${error.global ? ', global' : ''})`;
  if (error instanceof DiscordAPIError)
    return `${error.method.toUpperCase()}: ${error.status} ${String(error.code)} ${firstLine(error.message)}`;
  if (error instanceof HTTPError) return `${error.method.toUpperCase()}: ${error.status} ${error.name}`;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${error.name}: ${code}` : `${error.name}: ${firstLine(error.message)}`;
  }
  return String(error);
}

/**
 * Classifies a failed REST call for the Outbox: a rate limit → `rate_limited` with its wait; 5xx, 401 and network
 * errors → `transient`; other 4xx (unknown channel, missing access, a user who does not accept DMs, an invalid
 * body) → `permanent`.
 */
export function toDeliveryError(error: unknown): DeliveryError {
  if (error instanceof DeliveryError) return error;
  const message = describeDiscordError(error);
  if (error instanceof RateLimitError)
    return new DeliveryError(message, { kind: 'rate_limited', status: 429, retryAfterMs: waitOf(error), cause: error });
  if (error instanceof DiscordAPIError || error instanceof HTTPError) {
    const status = error.status;
    if (status === 429) return new DeliveryError(message, { kind: 'rate_limited', status, retryAfterMs: 1000 });
    if (status >= 500 || status === 401 || status === 408)
      return new DeliveryError(message, { kind: 'transient', status, cause: error });
    return new DeliveryError(message, { kind: 'permanent', status, cause: error });
  }
  return new DeliveryError(message, { kind: 'transient', cause: error });
}

/** How long a rate limit asks to wait (ms): the server's Retry-After, or the time until the bucket resets. */
function waitOf(error: RateLimitError): number {
  return Math.max(0, Math.ceil(Math.max(error.retryAfter, error.timeToReset)));
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

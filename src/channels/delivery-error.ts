// The typed error a connector throws from `send`, so the Outbox knows whether and when to retry.

/**
 * - `rate_limited`: the service asked to slow down (HTTP 429); `retryAfterMs` says how long to wait.
 * - `transient`: a failure that may pass (5xx, network error, timeout, conflict); retried with backoff.
 * - `permanent`: the service refused this message for good (chat not found, bot blocked, bad request); not retried.
 */
export type DeliveryErrorKind = 'rate_limited' | 'transient' | 'permanent';

export interface DeliveryErrorOptions {
  kind: DeliveryErrorKind;
  /** Wait at least this long before the next attempt (from the server's retry-after). */
  retryAfterMs?: number;
  /** The service's status code, when there is one. */
  status?: number;
  cause?: unknown;
}

/** A failed connector send, classified for the Outbox. */
export class DeliveryError extends Error {
  readonly kind: DeliveryErrorKind;
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;

  constructor(message: string, options: DeliveryErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DeliveryError';
    this.kind = options.kind;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
  }

  /** True unless the service refused the message for good. */
  get retryable(): boolean {
    return this.kind !== 'permanent';
  }
}

/** How the Outbox treats any thrown value: DeliveryErrors as classified, anything else as transient. */
export function classifyDeliveryFailure(error: unknown): {
  retryable: boolean;
  retryAfterMs: number | undefined;
  message: string;
} {
  if (error instanceof DeliveryError) {
    return { retryable: error.retryable, retryAfterMs: error.retryAfterMs, message: error.message };
  }
  return { retryable: true, retryAfterMs: undefined, message: error instanceof Error ? error.message : String(error) };
}

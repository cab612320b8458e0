// Decides whether a failed provider call may move to the next provider. Retryable: HTTP 408, 429 and 5xx (529 overloaded
// included), a time-out, a connection error (refused, reset, DNS, socket closed) and an answer cut off mid-stream. Every
// other failure (400, 401, 403, 404, 413, 422, a malformed request, …) ends the call: the next provider would get the
// same request and fail the same way, or the configuration needs fixing.

/** Why one provider attempt failed, and whether the next provider may be tried. */
export interface AttemptFailure {
  retryable: boolean;
  kind: 'http' | 'connection' | 'timeout' | 'aborted' | 'stream' | 'other';
  /** The HTTP status (or the status the provider's stream error stands for). */
  status?: number;
  /** One line, no secrets: e.g. `HTTP 429 rate_limit_error: slow down`. */
  reason: string;
}

/** Socket and DNS error codes (Node and undici) that mean the provider could not be reached or hung up. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
]);

type ErrorLike = {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  statusCode?: unknown;
  isRetryable?: unknown;
  lastError?: unknown;
  type?: unknown;
  data?: unknown;
};

function asErrorLike(value: unknown): ErrorLike | undefined {
  return value !== null && typeof value === 'object' ? value : undefined;
}

/** Whether a status code is worth another provider: 408 request timeout, 429 rate limit, any 5xx (529 overloaded). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The error the AI SDK's own retry loop gave up on (RetryError.lastError), else the error itself. */
function unwrapRetry(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 5; depth += 1) {
    const like = asErrorLike(current);
    if (like?.name !== 'AI_RetryError' || like.lastError === undefined) return current;
    current = like.lastError;
  }
  return current;
}

/** The first socket/DNS error code on the cause chain. */
function connectionCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    const like = asErrorLike(current);
    if (!like) return undefined;
    if (typeof like.code === 'string' && CONNECTION_CODES.has(like.code)) return like.code;
    // AggregateError (happy eyeballs: one error per address) carries the codes in `errors`.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      for (const inner of errors) {
        const code = connectionCode(inner);
        if (code) return code;
      }
    }
    current = like.cause;
  }
  return undefined;
}

/** The provider's error type (`rate_limit_error`, `server_error`, `RESOURCE_EXHAUSTED`, …) from the parsed error body. */
function providerErrorType(like: ErrorLike): string | undefined {
  if (typeof like.type === 'string') return like.type;
  const data = asErrorLike(like.data);
  const inner = asErrorLike(data && 'error' in data ? (data as { error?: unknown }).error : undefined);
  if (inner && typeof inner.type === 'string') return inner.type;
  if (inner && typeof (inner as { status?: unknown }).status === 'string')
    return String((inner as { status?: unknown }).status);
  return undefined;
}

function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Replaces every occurrence of the given secrets in `text` with [redacted]. */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * Classifies an error thrown by one AI SDK call (timeouts and caller aborts are decided by the caller, which knows
 * which signal fired). Looks through the SDK's RetryError to its last error, reads `statusCode` (APICallError,
 * StreamProviderError) and the socket error code on the cause chain. Returns a one-line reason without secrets.
 */
export function classifyFailure(error: unknown, secrets: readonly (string | undefined)[] = []): AttemptFailure {
  const inner = unwrapRetry(error);
  const like = asErrorLike(inner);
  const message = scrubSecrets(
    oneLine(like && typeof like.message === 'string' ? like.message : String(inner)),
    secrets,
  );
  // A 2xx status means the answer started and then broke (e.g. "Failed to process successful response" when the
  // connection drops mid-body): that is decided by the socket error below, not by the status.
  const status = like && typeof like.statusCode === 'number' && like.statusCode >= 300 ? like.statusCode : undefined;
  if (status !== undefined) {
    const type = like ? providerErrorType(like) : undefined;
    return {
      retryable: isRetryableStatus(status),
      kind: 'http',
      status,
      reason: `HTTP ${status}${type ? ` ${type}` : ''}: ${message}`,
    };
  }
  const code = connectionCode(inner);
  if (code !== undefined)
    return { retryable: true, kind: 'connection', reason: `connection error (${code}): ${message}` };
  const name = like && typeof like.name === 'string' ? like.name : 'Error';
  if (like?.isRetryable === true) {
    return name === 'AI_StreamProviderError'
      ? {
          retryable: true,
          kind: 'stream',
          reason: `stream error${typeof like.type === 'string' ? ` ${like.type}` : ''}: ${message}`,
        }
      : { retryable: true, kind: 'connection', reason: `connection error: ${message}` };
  }
  return { retryable: false, kind: 'other', reason: `${name}: ${message}` };
}

// Turns whatever a Linear call threw (an SDK LinearError, a fetch failure, a timeout) into one of the contract's kinds.
import { LinearError, LinearErrorType, RatelimitedLinearError } from '@linear/sdk';
import type { LinearErrorKind } from './types.ts';

/** A classified failure; `resetAt` / `retryAfterMs` come from Linear's rate-limit headers when it sent them. */
export interface ClassifiedError {
  kind: LinearErrorKind;
  message: string;
  status: number | undefined;
  /** Epoch ms at which the rate-limit window resets. */
  resetAt?: number;
  retryAfterMs?: number;
}

const SERVER_TYPES = new Set<string>([
  LinearErrorType.InternalError,
  LinearErrorType.LockTimeout,
  LinearErrorType.BootstrapError,
]);
const AUTH_TYPES = new Set<string>([LinearErrorType.AuthenticationError, LinearErrorType.Forbidden]);

/** Linear sends the reset as epoch ms; accept epoch seconds as well. */
function epochMs(value: number | undefined): number | undefined {
  if (value === undefined || !Number.isFinite(value) || value <= 0) return undefined;
  return value < 1e12 ? value * 1000 : value;
}

function graphqlCodes(error: LinearError): string[] {
  const raw =
    (error.raw as { response?: { errors?: { extensions?: { code?: unknown } }[] } } | undefined)?.response?.errors ??
    [];
  return raw.map((e) => (typeof e.extensions?.code === 'string' ? e.extensions.code : '')).filter(Boolean);
}

function cleanMessage(error: LinearError): string {
  const first = error.errors?.[0]?.message;
  const base = first ?? error.message ?? 'Linear request failed';
  return error.status ? `${base} (HTTP ${error.status})` : base;
}

/**
 * Classifies a thrown value. Order matters: a GraphQL error marked `userError` is final whatever the HTTP status (Linear
 * answers them with 200), then authentication, rate limits, server errors; anything without an HTTP answer is network.
 * Other GraphQL errors (validation, invalid input without the flag) are final too: repeating the request cannot help.
 */
export function classifyLinearFailure(error: unknown): ClassifiedError {
  if (error instanceof LinearError) {
    const status = error.status;
    const types = (error.errors ?? []).map((e) => String(e.type));
    const codes = graphqlCodes(error);
    if ((error.errors ?? []).some((e) => e.userError === true))
      return { kind: 'user', message: cleanMessage(error), status };
    if (
      status === 401 ||
      status === 403 ||
      types.some((t) => AUTH_TYPES.has(t)) ||
      codes.includes('AUTHENTICATION_ERROR')
    ) {
      return { kind: 'auth', message: cleanMessage(error), status };
    }
    if (
      status === 429 ||
      error instanceof RatelimitedLinearError ||
      types.includes(LinearErrorType.Ratelimited) ||
      codes.includes('RATELIMITED')
    ) {
      const limited = error instanceof RatelimitedLinearError ? error : undefined;
      const out: ClassifiedError = { kind: 'rate_limit', message: cleanMessage(error), status };
      const resetAt = epochMs(limited?.requestsResetAt) ?? epochMs(limited?.complexityResetAt);
      if (resetAt !== undefined) out.resetAt = resetAt;
      if (limited?.retryAfter !== undefined && Number.isFinite(limited.retryAfter))
        out.retryAfterMs = limited.retryAfter * 1000;
      return out;
    }
    if (status !== undefined && status >= 500) return { kind: 'server', message: cleanMessage(error), status };
    if (types.some((t) => SERVER_TYPES.has(t))) return { kind: 'server', message: cleanMessage(error), status };
    if (status === undefined && (error.errors ?? []).length === 0) {
      return { kind: 'network', message: describeCause(error.raw) ?? error.message, status };
    }
    return { kind: 'user', message: cleanMessage(error), status };
  }
  return { kind: 'network', message: describeCause(error) ?? String(error), status: undefined };
}

/** A readable message for a fetch failure: its cause (ECONNREFUSED, timeout) rather than "fetch failed". */
function describeCause(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `request timed out (${error.message})`;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return `${error.message}: ${cause.message}`;
  return error.message;
}

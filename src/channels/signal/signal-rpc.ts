// signal-cli's JSON-RPC endpoint (`POST /api/v1/rpc` of `signal-cli daemon --http`) through Node's fetch: one call per
// request, its failures classified as DeliveryErrors for the outbox (rate limits, refusals for good, the rest retried).
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { DeliveryError } from '../delivery-error.ts';

/** JSON-RPC's own "invalid params" code: signal-cli answers it for a malformed or unknown recipient or group. */
const INVALID_PARAMS = -32602;
/** signal-cli's codes for a user error (an unknown group, an unregistered number) and a rate limit. */
const USER_ERROR = -1;
const RATE_LIMIT_ERROR = -5;

const rpcReply = z.object({
  result: z.unknown().optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});

const sendResult = z.object({
  timestamp: z.number(),
  results: z.array(z.object({ type: z.string(), retryAfterSeconds: z.number().nullish() }).loose()).optional(),
});

/** What `send` answers: the message's timestamp (its id on Signal). */
export type SignalSendResult = z.infer<typeof sendResult>;

/** Where a message goes: one number, or a group by its base64 id. */
export type SignalRecipient = { kind: 'number'; number: string } | { kind: 'group'; groupId: string };

export interface SignalRpcOptions {
  /** The daemon's base URL (http://127.0.0.1:8080). */
  url: string;
  /** The account (number) named in each call; absent when the daemon serves one account (`-a`). */
  account?: string;
  /** A call taking longer than this is abandoned (and counts as a transient failure). */
  timeoutMs: number;
  clock: Clock;
}

/** A JSON-RPC client of one signal-cli daemon, for one account. */
export class SignalRpc {
  #options: SignalRpcOptions;
  #nextId = 1;

  constructor(options: SignalRpcOptions) {
    this.#options = options;
  }

  /**
   * Sends `text` to `to`, quoting the message `quote` names; resolves to signal-cli's result (its `timestamp` names the
   * message). Throws DeliveryError.
   */
  async send(
    to: SignalRecipient,
    text: string,
    quote?: { quoteAuthor: string; quoteTimestamp: number },
  ): Promise<SignalSendResult> {
    const params = { ...recipientParams(to), message: text, ...(quote ?? {}) };
    const result = sendResult.safeParse(await this.call('send', params));
    if (!result.success) throw new DeliveryError('signal-cli answered send without a timestamp', { kind: 'transient' });
    failedSend(result.data);
    return result.data;
  }

  /** Shows "typing…" to `to` (signal-cli's `sendTyping`). Throws DeliveryError. */
  async typing(to: SignalRecipient): Promise<void> {
    await this.call('sendTyping', recipientParams(to));
  }

  /** Calls `method` with `params` (plus the account); resolves to its result, throws DeliveryError on any failure. */
  async call(method: string, params: Record<string, unknown>): Promise<unknown> {
    const { account, timeoutMs, clock } = this.#options;
    const id = this.#nextId++;
    const abort = new AbortController();
    const timer = clock.after(timeoutMs, () => abort.abort(new Error(`no answer within ${timeoutMs} ms`)));
    try {
      return await this.#post(
        method,
        { jsonrpc: '2.0', id, method, params: account ? { ...params, account } : params },
        abort.signal,
      );
    } finally {
      timer.cancel();
    }
  }

  async #post(method: string, request: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(new URL('/api/v1/rpc', this.#options.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
        signal,
      });
    } catch (error) {
      const reason: unknown = signal.aborted ? signal.reason : error;
      throw new DeliveryError(`signal-cli not reachable (${method}): ${describe(reason)}`, {
        kind: 'transient',
        cause: error,
      });
    }
    if (!response.ok) {
      await response.body?.cancel();
      const kind = response.status >= 500 || response.status === 429 ? 'transient' : 'permanent';
      throw new DeliveryError(`signal-cli answered HTTP ${response.status} to ${method}`, {
        kind,
        status: response.status,
      });
    }
    let reply: z.infer<typeof rpcReply>;
    try {
      reply = rpcReply.parse(await response.json());
    } catch (error) {
      throw new DeliveryError(`signal-cli answered ${method} with no JSON-RPC reply`, {
        kind: 'transient',
        cause: error,
      });
    }
    if (reply.error) throw rpcError(method, reply.error);
    return reply.result;
  }
}

function recipientParams(to: SignalRecipient): Record<string, unknown> {
  return to.kind === 'group' ? { groupId: to.groupId } : { recipient: [to.number] };
}

/** Classifies a JSON-RPC error of signal-cli. */
export function rpcError(method: string, error: { code: number; message: string }): DeliveryError {
  const message = `signal-cli refused ${method}: ${error.message} (${error.code})`;
  if (error.code === RATE_LIMIT_ERROR || /rate.?limit/i.test(error.message))
    return new DeliveryError(message, { kind: 'rate_limited', retryAfterMs: 60_000 });
  if (error.code === INVALID_PARAMS || error.code === USER_ERROR)
    return new DeliveryError(message, { kind: 'permanent' });
  return new DeliveryError(message, { kind: 'transient' });
}

/** Throws when no recipient of a send got the message (a group with one member reached counts as sent). */
function failedSend(result: SignalSendResult): void {
  const results = result.results ?? [];
  if (results.length === 0 || results.some((r) => r.type === 'SUCCESS')) return;
  const types = [...new Set(results.map((r) => r.type))].join(', ');
  const message = `signal-cli could not deliver the message: ${types}`;
  const limited = results.find((r) => r.type === 'RATE_LIMIT_FAILURE');
  if (limited)
    throw new DeliveryError(message, { kind: 'rate_limited', retryAfterMs: (limited.retryAfterSeconds ?? 60) * 1000 });
  if (results.every((r) => r.type === 'UNREGISTERED_FAILURE')) throw new DeliveryError(message, { kind: 'permanent' });
  throw new DeliveryError(message, { kind: 'transient' });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

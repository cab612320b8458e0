// A JSON-RPC body, single request or batch, answered within the gateway's limits: at most `gateway.maxBatch` calls
// per batch, run one after another with a turn of the event loop between them, and at most
// `gateway.maxResponseBytes` of response, counted as each response is serialized; what would go beyond is refused
// with an error naming the limit instead of being built.
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { nextTurn } from '../core/turn-gate.ts';
import type { MethodCaller, RpcId, RpcResponse } from './json-rpc.ts';
import { handleOne, RPC_ERRORS, rpcError } from './json-rpc.ts';

/** The limits a body is answered within (`gateway.maxBatch`, `gateway.maxResponseBytes`). */
export interface RpcLimits {
  maxBatch: number;
  maxResponseBytes: number;
}

/** What to send: the HTTP status and the serialized JSON body (null: nothing, only notifications were sent). */
export interface RpcAnswer {
  status: number;
  body: string | null;
}

/** Serializes one response; a result that cannot be serialized becomes an internal error (logged). */
function serialize(response: RpcResponse, logger: Logger): string {
  try {
    return JSON.stringify(response);
  } catch (error) {
    logger.error({ err: error }, 'rpc result could not be serialized');
    return JSON.stringify(
      rpcError(
        response.id,
        RPC_ERRORS.internal,
        `internal error: the result could not be serialized (${errorMessage(error)})`,
        { kind: 'internal' },
      ),
    );
  }
}

function tooLarge(id: RpcId, bytes: number, max: number): string {
  return JSON.stringify(
    rpcError(
      id,
      RPC_ERRORS.limit,
      `response too large: ${bytes} bytes, over gateway.maxResponseBytes (${max}); ask for less (fewer lines, fewer calls)`,
      { kind: 'limit' },
    ),
  );
}

function notRun(id: RpcId, max: number): string {
  return JSON.stringify(
    rpcError(
      id,
      RPC_ERRORS.limit,
      `not run: the batch's responses reached gateway.maxResponseBytes (${max}) before this call; send it in another request`,
      { kind: 'limit' },
    ),
  );
}

function requestId(item: unknown): RpcId {
  if (typeof item !== 'object' || item === null || !Object.hasOwn(item, 'id')) return null;
  const id = (item as { id: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function isNotification(item: unknown): boolean {
  return typeof item === 'object' && item !== null && !Array.isArray(item) && !Object.hasOwn(item, 'id');
}

async function handleBatch(
  items: unknown[],
  call: MethodCaller,
  logger: Logger,
  limits: RpcLimits,
): Promise<RpcAnswer> {
  if (items.length === 0)
    return {
      status: 400,
      body: JSON.stringify(rpcError(null, RPC_ERRORS.invalidRequest, 'invalid request: empty batch')),
    };
  if (items.length > limits.maxBatch) {
    const message = `invalid request: a batch may hold at most ${limits.maxBatch} calls (gateway.maxBatch); this one holds ${items.length}`;
    return { status: 400, body: JSON.stringify(rpcError(null, RPC_ERRORS.invalidRequest, message)) };
  }
  const parts: string[] = [];
  let bytes = 2;
  let full = false;
  let skipped = 0;
  for (const item of items) {
    if (full) {
      skipped += 1;
      if (!isNotification(item)) parts.push(notRun(requestId(item), limits.maxResponseBytes));
      continue;
    }
    await nextTurn();
    const response = await handleOne(item, call, logger);
    if (response === null) continue;
    const text = serialize(response, logger);
    const size = Buffer.byteLength(text) + 1;
    if (bytes + size > limits.maxResponseBytes) {
      full = true;
      parts.push(tooLarge(response.id, size, limits.maxResponseBytes));
      continue;
    }
    bytes += size;
    parts.push(text);
  }
  if (full)
    logger.warn(
      { calls: items.length, skipped, maxResponseBytes: limits.maxResponseBytes },
      'rpc batch response reached gateway.maxResponseBytes',
    );
  return { status: 200, body: parts.length > 0 ? `[${parts.join(',')}]` : null };
}

/**
 * Answers a JSON-RPC 2.0 body (text): a single request or a batch, within `limits`. Never throws: every failure is a
 * JSON-RPC error in the answer.
 */
export async function handleRpcBody(
  body: string,
  call: MethodCaller,
  logger: Logger,
  limits: RpcLimits,
): Promise<RpcAnswer> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return {
      status: 400,
      body: JSON.stringify(rpcError(null, RPC_ERRORS.parseError, `parse error: ${errorMessage(error)}`)),
    };
  }
  if (Array.isArray(parsed)) return handleBatch(parsed, call, logger, limits);
  const response = await handleOne(parsed, call, logger);
  if (response === null) return { status: 204, body: null };
  const invalid = 'error' in response && response.error.code === RPC_ERRORS.invalidRequest;
  const text = serialize(response, logger);
  const size = Buffer.byteLength(text);
  return {
    status: invalid ? 400 : 200,
    body: size > limits.maxResponseBytes ? tooLarge(response.id, size, limits.maxResponseBytes) : text,
  };
}

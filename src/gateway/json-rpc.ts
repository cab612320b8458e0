import type { ErrorKind } from '../core/errors.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

/** JSON-RPC 2.0 error codes: the spec's, then the server range for application errors. */
export const RPC_ERRORS = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  unauthorized: -32001,
  forbidden: -32003,
  notFound: -32004,
  limit: -32005,
  conflict: -32009,
  unavailable: -32010,
} as const;

const KIND_CODES: Record<ErrorKind, number> = {
  invalid_input: RPC_ERRORS.invalidParams,
  not_found: RPC_ERRORS.notFound,
  limit: RPC_ERRORS.limit,
  conflict: RPC_ERRORS.conflict,
  forbidden: RPC_ERRORS.forbidden,
  unavailable: RPC_ERRORS.unavailable,
  internal: RPC_ERRORS.internal,
};

export type RpcId = string | number | null;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: { kind: ErrorKind; field?: string };
}

export type RpcResponse =
  { jsonrpc: '2.0'; id: RpcId; result: unknown } | { jsonrpc: '2.0'; id: RpcId; error: RpcErrorObject };

/** Calls one method by name with params; `undefined` means no such method. */
export type MethodCaller = (method: string, params: unknown) => Promise<unknown> | undefined;

/** Builds an error response. */
export function rpcError(id: RpcId, code: number, message: string, data?: RpcErrorObject['data']): RpcResponse {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } };
}

function describeType(value: unknown): string {
  return Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
}

/** Runs one request object of a body (single or batch item); null for a notification. Never throws. */
export async function handleOne(request: unknown, call: MethodCaller, logger: Logger): Promise<RpcResponse | null> {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return rpcError(
      null,
      RPC_ERRORS.invalidRequest,
      `invalid request: expected an object, got ${describeType(request)}`,
    );
  }
  const r = request as Record<string, unknown>;
  const idValid = r.id === undefined || r.id === null || typeof r.id === 'string' || typeof r.id === 'number';
  const id: RpcId = idValid ? ((r.id as RpcId | undefined) ?? null) : null;
  if (r.jsonrpc !== '2.0') return rpcError(id, RPC_ERRORS.invalidRequest, 'invalid request: "jsonrpc" must be "2.0"');
  if (!idValid)
    return rpcError(null, RPC_ERRORS.invalidRequest, 'invalid request: "id" must be a string, a number or null');
  if (typeof r.method !== 'string' || r.method.length === 0) {
    return rpcError(id, RPC_ERRORS.invalidRequest, 'invalid request: "method" must be a non-empty string');
  }
  if (r.params !== undefined && (typeof r.params !== 'object' || r.params === null || Array.isArray(r.params))) {
    return rpcError(
      id,
      RPC_ERRORS.invalidParams,
      `invalid params: "params" must be an object of named parameters, got ${describeType(r.params)}`,
    );
  }
  const isNotification = !Object.hasOwn(r, 'id');
  let response: RpcResponse;
  try {
    const pending = call(r.method, r.params ?? {});
    if (pending === undefined) {
      response = rpcError(id, RPC_ERRORS.methodNotFound, `method not found: ${r.method}`);
    } else {
      response = { jsonrpc: '2.0', id, result: (await pending) ?? null };
    }
  } catch (error) {
    if (error instanceof AppError) {
      response = rpcError(id, KIND_CODES[error.kind], error.message, {
        kind: error.kind,
        ...(error.field ? { field: error.field } : {}),
      });
    } else {
      logger.error({ err: error, method: r.method }, 'rpc method failed');
      response = rpcError(id, RPC_ERRORS.internal, `internal error: ${errorMessage(error)}`, { kind: 'internal' });
    }
  }
  return isNotification ? null : response;
}

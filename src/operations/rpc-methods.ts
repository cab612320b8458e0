import { invalidInput } from '../core/errors.ts';
import { idempotencyKeySchema } from './idempotency.ts';
import { parseOperationInput } from './input.ts';
import { servicesFor } from './needs.ts';
import type { Caller, Operation, OperationServices } from './operation.ts';

/** One JSON-RPC method: validates named params and returns the result object. Throws AppError on bad input. */
export interface RpcMethod {
  name: string;
  summary: string;
  call(params: unknown, caller: Caller, services: OperationServices): Promise<unknown>;
}

/**
 * Calls an `idempotent` operation, under the request's `idempotencyKey` when it has one: scoped per caller kind and
 * method, a repeat with the same parameters answers the first answer, other parameters under the key are a conflict.
 */
async function keyedCall(
  op: Operation,
  method: string,
  params: unknown,
  caller: Caller,
  services: OperationServices,
): Promise<unknown> {
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return op.run({ caller, services }, parseOperationInput(op, params));
  const { idempotencyKey, idempotency_key: snake, ...rest } = params as Record<string, unknown>;
  if (idempotencyKey !== undefined && snake !== undefined)
    throw invalidInput('idempotencyKey: given twice (as idempotencyKey and idempotency_key)', 'idempotencyKey');
  const raw = idempotencyKey ?? snake;
  if (raw === undefined) return op.run({ caller, services }, parseOperationInput(op, rest));
  const key = idempotencyKeySchema.safeParse(raw);
  if (!key.success)
    throw invalidInput(`idempotencyKey: ${key.error.issues[0]?.message ?? 'invalid'}`, 'idempotencyKey');
  const input = parseOperationInput(op, rest);
  // A key needs the idempotency store; a request without one does not.
  const { idempotency: keys } = servicesFor(['idempotency'], services);
  const answer = await keys.run({ scope: `${caller.kind}:${method}`, key: key.data, body: input }, async (commit) => ({
    kind: 'answer',
    response: await op.run({ caller, services, idempotency: commit }, input),
  }));
  return answer.response;
}

/** Every RPC method: each operation's `rpc` name, then the seed's `claude-code.*` names of those with a `legacyRpc` alias. */
export function rpcMethods(ops: readonly Operation[]): Map<string, RpcMethod> {
  const methods = new Map<string, RpcMethod>();
  for (const op of ops) {
    const name = op.expose.rpc;
    if (!name) continue;
    methods.set(name, {
      name,
      summary: op.summary,
      call: async (params, caller, services) =>
        op.idempotent
          ? keyedCall(op, name, params, caller, services)
          : op.run({ caller, services }, parseOperationInput(op, params)),
    });
  }
  for (const op of ops) {
    const legacy = op.expose.legacyRpc;
    if (!legacy) continue;
    methods.set(legacy.method, {
      name: legacy.method,
      summary: `${op.summary} (seed-compatible)`,
      call: async (params, caller, services) =>
        legacy.shape(await op.run({ caller, services }, parseOperationInput(op, params))),
    });
  }
  return methods;
}

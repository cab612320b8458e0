import { LEGACY_METHODS } from './legacy-rpc.ts';
import { parseOperationInput } from './input.ts';
import type { Caller, Operation, OperationServices } from './operation.ts';

/** One JSON-RPC method: validates named params and returns the result object. Throws AppError on bad input. */
export interface RpcMethod {
  name: string;
  summary: string;
  call(params: unknown, caller: Caller, services: OperationServices): Promise<unknown>;
}

/** Every RPC method: each operation's `sessions.*` name plus the seed's `claude-code.*` methods. */
export function rpcMethods(ops: readonly Operation[]): Map<string, RpcMethod> {
  const methods = new Map<string, RpcMethod>();
  for (const op of ops) {
    const name = op.expose.rpc;
    if (!name) continue;
    methods.set(name, {
      name,
      summary: op.summary,
      call: async (params, caller, services) => op.run({ caller, services }, parseOperationInput(op, params)),
    });
  }
  for (const legacy of LEGACY_METHODS) {
    methods.set(legacy.name, {
      name: legacy.name,
      summary: `${legacy.op.summary} (seed-compatible)`,
      call: async (params, caller, services) =>
        legacy.shape(await legacy.op.run({ caller, services }, parseOperationInput(legacy.op, params))),
    });
  }
  return methods;
}

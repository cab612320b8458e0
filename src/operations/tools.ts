// The table's operations as model tools: each operation exposed as a tool becomes one Tool (engine/tool.ts), with the
// operation's summary as description, its snake_case input schema, and its formatted result as the answer.
import type { Tool, ToolOutcome } from '../engine/tool.ts';
import { defineTool, runToolCall } from '../engine/tool.ts';
import type { ToolSpec } from '../inference/types.ts';
import { inputJsonSchema, parseOperationInput } from './input.ts';
import type { Caller, Operation, OperationServices } from './operation.ts';

/** What an operation run as a tool is called with: who calls (the engine session) and the daemon's services. */
export interface ToolCallContext {
  caller: Caller;
  services: OperationServices;
  /** Aborts when the engine turn that called the tool is stopped. */
  signal?: AbortSignal;
}

/** The tool of every operation exposed as one, in table order. */
export function operationTools(ops: readonly Operation[]): Tool<ToolCallContext>[] {
  return ops.flatMap((op) => {
    const name = op.expose.tool;
    if (!name) return [];
    return [
      defineTool({
        name,
        description: op.summary,
        input: op.input,
        inputSchema: inputJsonSchema(op),
        parse: (raw) => parseOperationInput(op, raw),
        run: async (ctx: ToolCallContext, input) => op.format(await op.run(ctx, input)),
      }),
    ];
  });
}

/** The tool specs of every operation exposed as a tool. */
export function toolDefinitions(ops: readonly Operation[]): ToolSpec[] {
  return operationTools(ops).map((t) => t.spec);
}

/** Runs the operation behind tool `name` for `caller`; errors come back as an error outcome, never as a throw. */
export async function runTool(
  ops: readonly Operation[],
  name: string,
  args: unknown,
  caller: Caller,
  services: OperationServices,
): Promise<ToolOutcome> {
  return runToolCall(
    operationTools(ops.filter((op) => op.expose.tool === name)),
    { caller, services },
    { name, input: args },
  );
}

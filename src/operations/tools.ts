import { AppError, errorMessage } from '../core/errors.ts';
import type { Caller, Operation, OperationServices } from './operation.ts';
import { inputJsonSchema, parseOperationInput } from './input.ts';

/** A tool as a model sees it. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What a tool call returns to the model: text, and whether it is an error. Never throws. */
export interface ToolResult {
  text: string;
  isError: boolean;
}

/** The tool definitions of every operation exposed as a tool. */
export function toolDefinitions(ops: readonly Operation[]): ToolDefinition[] {
  return ops
    .filter((op) => op.expose.tool)
    .map((op) => ({ name: op.expose.tool as string, description: op.summary, inputSchema: inputJsonSchema(op) }));
}

/** Runs the operation behind tool `name` for an agent; errors come back as an error result, never as a throw. */
export async function runTool(
  ops: readonly Operation[],
  name: string,
  args: unknown,
  caller: Caller,
  services: OperationServices,
): Promise<ToolResult> {
  const op = ops.find((o) => o.expose.tool === name);
  if (!op) return { text: `Unknown tool ${name}.`, isError: true };
  try {
    const input = parseOperationInput(op, args);
    const result = await op.run({ caller, services }, input);
    return { text: op.format(result), isError: false };
  } catch (error) {
    return { text: error instanceof AppError ? error.message : `Error: ${errorMessage(error)}`, isError: true };
  }
}

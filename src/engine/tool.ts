// The one primitive every model tool is built on: a name, a description, a zod input and a run over a context. The
// operations table turns each operation exposed as a tool into one (operations/tools.ts); the Linear planner defines
// its private tools with it (linear/planner/tools.ts). Validation, the JSON Schema the model sees and how failures
// come back to the model are written here once.
import { z } from 'zod';
import { AppError, errorMessage, formatZodError, invalidInput } from '../core/errors.ts';
import type { ToolCall, ToolSpec } from '../inference/types.ts';

/** A tool's answer to the model: its text, and whether it is an error. */
export interface ToolOutcome {
  text: string;
  isError: boolean;
}

/** One tool a model may call with context `C`: what the model is shown, and the call that validates and runs it. */
export interface Tool<C> {
  spec: ToolSpec;
  /** Validates `raw` (throws invalid_input naming the field) and runs the tool; resolves with the text for the model. */
  call(ctx: C, raw: unknown): Promise<string>;
}

/** How a tool is defined: its input schema and run stay tied together by `S`. */
export interface ToolDefinition<C, S extends z.ZodObject> {
  name: string;
  description: string;
  input: S;
  /** The schema shown to the model; default: `toolInputSchema(input)`. */
  inputSchema?: Record<string, unknown>;
  /** Reads raw input into the schema's output; default: `input.safeParse`, errors as `<name>: <field>: <reason>`. */
  parse?: (raw: unknown) => z.output<S>;
  run(ctx: C, input: z.output<S>): Promise<string>;
}

/** The JSON Schema of a zod object input as a model is given it (the input side, without `$schema`). */
export function toolInputSchema(schema: z.ZodObject): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input' });
  return rest;
}

/** Builds a tool from its definition. */
export function defineTool<C, S extends z.ZodObject>(def: ToolDefinition<C, S>): Tool<C> {
  const parse =
    def.parse ??
    ((raw: unknown): z.output<S> => {
      const result = def.input.safeParse(raw ?? {});
      if (!result.success) throw invalidInput(`${def.name}: ${formatZodError(result.error)}`);
      return result.data;
    });
  return {
    spec: { name: def.name, description: def.description, inputSchema: def.inputSchema ?? toolInputSchema(def.input) },
    call: async (ctx, raw) => def.run(ctx, parse(raw)),
  };
}

/**
 * Runs `call` on the tool of its name. Never throws: an unknown name, bad input and failures come back as error
 * outcomes (an AppError as its message, anything else as `<name> failed: <message>`), so the model can correct itself.
 */
export async function runToolCall<C>(
  tools: readonly Tool<C>[],
  ctx: C,
  call: Pick<ToolCall, 'name' | 'input'>,
): Promise<ToolOutcome> {
  const tool = tools.find((t) => t.spec.name === call.name);
  if (!tool) return { text: `Unknown tool ${call.name}.`, isError: true };
  try {
    return { text: await tool.call(ctx, call.input), isError: false };
  } catch (error) {
    return {
      text: error instanceof AppError ? error.message : `${call.name} failed: ${errorMessage(error)}`,
      isError: true,
    };
  }
}

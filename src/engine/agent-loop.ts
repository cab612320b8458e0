// The agent loop of one turn: call the model, run the tools it asks for, feed the results back, until it answers
// without tools or `maxIterations` model calls were made. Every step is handed to `record` (the log) as it happens.
import { errorMessage } from '../core/errors.ts';
import type { ChatMessage, Inference, ToolCall, ToolSpec } from '../inference/types.ts';
import { NoProviderError } from '../inference/types.ts';
import type { TurnStep } from './history.ts';
import type { ToolOutcome } from './tool.ts';

/** The texts the seed prescribes. */
export const INFERENCE_FAILED = 'Inference failed.';
export const NO_PROVIDER = 'No inference provider available.';
export const TOOL_LIMIT = 'Tool execution limit reached.';
export const INTERNAL_ERROR = 'Internal error.';

export interface AgentLoopInput {
  sessionId: string;
  system: string;
  /** Earlier turns, then this turn's message as the last entry. */
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxIterations: number;
  signal: AbortSignal;
  inference: Inference;
  /** Runs a validated call; a throw becomes an error result. */
  runTool(call: ToolCall): Promise<ToolOutcome>;
  /** Writes a step to the session's log. */
  record(step: TurnStep): void;
  /** Told about each non-empty model text as soon as it is recorded (user sessions send it at once). */
  onText(text: string): Promise<void> | void;
}

/** How the loop ended. `failure` is the text to show for it; `error` the detail for logs. */
export type AgentLoopResult =
  | { outcome: 'ok' | 'limit' | 'error'; lastText: string | null; failure?: string; error?: string }
  /** The engine is stopping and aborted the model call: the turn stays open (restore closes it). */
  | { outcome: 'abandoned' };

async function callTool(
  call: ToolCall,
  offered: Set<string>,
  run: (call: ToolCall) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  if (!offered.has(call.name))
    return { text: `Unknown tool ${call.name}. Available: ${[...offered].join(', ') || 'none'}.`, isError: true };
  if (
    call.input !== undefined &&
    call.input !== null &&
    (typeof call.input !== 'object' || Array.isArray(call.input))
  ) {
    return { text: `${call.name}: the input must be an object of named parameters.`, isError: true };
  }
  try {
    return await run(call);
  } catch (error) {
    return { text: `${call.name} failed: ${errorMessage(error)}`, isError: true };
  }
}

/** Runs one turn's model/tool loop. Never throws for model or tool failures; only for failures of `record`. */
export async function runAgentLoop(input: AgentLoopInput): Promise<AgentLoopResult> {
  const messages = [...input.messages];
  const offered = new Set(input.tools.map((t) => t.name));
  let lastText: string | null = null;
  for (let iteration = 0; iteration < input.maxIterations; iteration += 1) {
    let result;
    try {
      result = await input.inference.complete({
        system: input.system,
        messages: [...messages],
        tools: input.tools,
        signal: input.signal,
        sessionId: input.sessionId,
      });
    } catch (error) {
      if (input.signal.aborted) return { outcome: 'abandoned' };
      if (error instanceof NoProviderError)
        return { outcome: 'error', lastText, failure: NO_PROVIDER, error: error.message };
      return { outcome: 'error', lastText, failure: INFERENCE_FAILED, error: errorMessage(error) };
    }
    if (result.finishReason === 'error') {
      return {
        outcome: 'error',
        lastText,
        failure: INFERENCE_FAILED,
        error: `${result.provider}/${result.model} finished with an error`,
      };
    }
    const text = result.text ?? '';
    const toolCalls = result.toolCalls ?? [];
    input.record({ type: 'assistant', text, toolCalls });
    messages.push({ role: 'assistant', content: text, ...(toolCalls.length > 0 ? { toolCalls } : {}) });
    if (text.trim()) {
      lastText = text;
      await input.onText(text);
    }
    if (toolCalls.length === 0) return { outcome: 'ok', lastText };
    for (const call of toolCalls) {
      const outcome = await callTool(call, offered, (c) => input.runTool(c));
      input.record({
        type: 'tool_result',
        toolCallId: call.id,
        name: call.name,
        content: outcome.text,
        isError: outcome.isError,
      });
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: outcome.text,
        isError: outcome.isError,
      });
    }
  }
  return lastText === null
    ? { outcome: 'limit', lastText, failure: TOOL_LIMIT, error: `stopped after ${input.maxIterations} model calls` }
    : { outcome: 'limit', lastText, error: `stopped after ${input.maxIterations} model calls` };
}

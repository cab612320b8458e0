// Maps the engine's provider-neutral conversation (ChatMessage, ToolSpec) to the AI SDK's ModelMessage and tool
// definitions, and the SDK's tool calls back. Tools carry no `execute`: the engine runs them and sends results back.
import type { JSONSchema7, ModelMessage, ToolCallPart, ToolResultPart, ToolSet } from 'ai';
import { jsonSchema, tool } from 'ai';
import type { ChatMessage, ToolCall, ToolSpec } from './types.ts';

/**
 * Converts a conversation to ModelMessages. An assistant message becomes text plus tool-call parts; consecutive tool
 * messages become one tool message whose results carry the error flag (`error-text` when `isError`). An assistant
 * message with no text and no tool calls is dropped (providers reject empty assistant content).
 */
export function toModelMessages(messages: ChatMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        out.push({ role: 'user', content: message.content });
        break;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) {
          if (message.content !== '') out.push({ role: 'assistant', content: message.content });
          break;
        }
        const parts: ({ type: 'text'; text: string } | ToolCallPart)[] = [];
        if (message.content !== '') parts.push({ type: 'text', text: message.content });
        for (const call of calls)
          parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input ?? {} });
        out.push({ role: 'assistant', content: parts });
        break;
      }
      case 'tool': {
        const part: ToolResultPart = {
          type: 'tool-result',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          output: message.isError
            ? { type: 'error-text', value: message.content }
            : { type: 'text', value: message.content },
        };
        const last = out.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else out.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return out;
}

/** Converts tool specs to an AI SDK tool set (definitions only, no execute); undefined when there are none. */
export function toToolSet(specs: ToolSpec[]): ToolSet | undefined {
  if (specs.length === 0) return undefined;
  const tools: ToolSet = {};
  for (const spec of specs) {
    tools[spec.name] = tool({
      description: spec.description,
      inputSchema: jsonSchema(spec.inputSchema as JSONSchema7),
    });
  }
  return tools;
}

/** The shape of an AI SDK tool call, as far as the engine needs it. */
export interface SdkToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** Converts the SDK's tool calls (invalid ones included: the engine answers those with an error result). */
export function fromToolCalls(calls: readonly SdkToolCall[]): ToolCall[] {
  return calls.map((call) => ({ id: call.toolCallId, name: call.toolName, input: call.input }));
}

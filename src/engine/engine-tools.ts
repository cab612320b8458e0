// The engine's own tools: start a background agent (a subagent session) and message another session.
import { z } from 'zod';
import { AppError, errorMessage, formatZodError } from '../core/errors.ts';
import type { ToolCall, ToolSpec } from '../inference/types.ts';
import type { ToolOutcome } from './tool.ts';
import type { AgentToolbox, EngineSessionInfo } from './toolbox.ts';

/** What the engine's tools need from the engine. */
export interface EngineToolHost {
  /** Creates a subagent of `parentSessionId`, queues `prompt` as its first message, returns at once. */
  startBackgroundAgent(input: { prompt: string; name: string; parentSessionId: string }): Promise<{ sessionId: string }>;
  /**
   * Posts `text` from session `fromId` to `targetId`, or (when absent) to its parent (subagents) or the most recent
   * foreground session (others). Throws AppError when there is no such session.
   */
  sendFromSession(fromId: string, text: string, targetId?: string): Promise<{ sessionId: string }>;
}

export const START_BACKGROUND_AGENT = 'start_background_agent';
export const SEND_SESSION_MESSAGE = 'send_session_message';

/** Input of start_background_agent. */
export const startBackgroundAgentInput = z.strictObject({
  prompt: z.string().trim().min(1, 'the prompt must not be empty').describe('the task for the background agent'),
  name: z.string().trim().min(1, 'give the agent a name').max(64).describe('a short name for the agent (used in its reports)'),
});

/** Input of send_session_message. */
export const sendSessionMessageInput = z.strictObject({
  text: z.string().trim().min(1, 'the text must not be empty'),
  session_id: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('target engine session id; default: your parent (subagents) or the most recent user session'),
});

function jsonSchema(schema: z.ZodObject): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

const SPECS: ToolSpec[] = [
  {
    name: START_BACKGROUND_AGENT,
    description:
      'Start a background agent (a subagent session with its own model loop and tools) on a task. Returns at once with its session id; its final reply of each turn comes back to you as a system message from `subagent:<name>`.',
    inputSchema: jsonSchema(startBackgroundAgentInput),
  },
  {
    name: SEND_SESSION_MESSAGE,
    description:
      'Send a message to another engine session; it arrives there as a system message. Without session_id it goes to your parent (if you are a subagent) or to the most recent user session.',
    inputSchema: jsonSchema(sendSessionMessageInput),
  },
];

function parse<S extends z.ZodObject>(tool: string, schema: S, input: unknown): z.output<S> | ToolOutcome {
  const raw = input && typeof input === 'object' && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : input;
  if (raw && typeof raw === 'object' && 'sessionId' in raw && !('session_id' in raw)) {
    const record = raw as Record<string, unknown>;
    record.session_id = record.sessionId;
    delete record.sessionId;
  }
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data;
  return { text: `${tool}: ${formatZodError(result.error)}`, isError: true };
}

function isOutcome(value: unknown): value is ToolOutcome {
  return typeof value === 'object' && value !== null && 'isError' in value && 'text' in value;
}

/** The engine's own tools as a toolbox over `host`. Errors come back as error outcomes, never as throws. */
export function engineToolbox(host: EngineToolHost): AgentToolbox {
  const run = async (call: ToolCall, session: EngineSessionInfo): Promise<ToolOutcome> => {
    try {
      if (call.name === START_BACKGROUND_AGENT) {
        const input = parse(call.name, startBackgroundAgentInput, call.input);
        if (isOutcome(input)) return input;
        const { sessionId } = await host.startBackgroundAgent({ prompt: input.prompt, name: input.name, parentSessionId: session.id });
        return { text: `Started background agent "${input.name}" (session ${sessionId}). Its reply will come back to you as a system message.`, isError: false };
      }
      if (call.name === SEND_SESSION_MESSAGE) {
        const input = parse(call.name, sendSessionMessageInput, call.input);
        if (isOutcome(input)) return input;
        const { sessionId } = await host.sendFromSession(session.id, input.text, input.session_id);
        return { text: `Message delivered to session ${sessionId}.`, isError: false };
      }
      return { text: `Unknown tool ${call.name}.`, isError: true };
    } catch (error) {
      return { text: error instanceof AppError ? `${call.name}: ${error.message}` : `${call.name} failed: ${errorMessage(error)}`, isError: true };
    }
  };
  return { tools: () => SPECS, run };
}

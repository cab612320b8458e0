import { z } from 'zod';
import type { HarnessEvent } from '../harness.ts';
import { classifyResult, resultUsage, turnCostUsd } from './claude-outcome.ts';

// Schemas for the stream-json messages Claude Code prints (agent-clis.md §1.3). They check the fields switchboard
// reads and let every other field through, so a newer CLI that adds fields still parses; an unknown `type` parses as
// `other`.

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
  is_error: z.boolean().nullable().optional(),
});
const KNOWN_BLOCKS = ['text', 'tool_use', 'tool_result'];
const otherBlock = z.looseObject({
  type: z.string().refine((t) => !KNOWN_BLOCKS.includes(t), 'known block type with bad fields'),
});
const contentBlock = z.union([textBlock, toolUseBlock, toolResultBlock, otherBlock]);

const envelope = {
  session_id: z.string().optional(),
  uuid: z.string().optional(),
};

export const initSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('init'),
  session_id: z.string().min(1),
  model: z.string().optional(),
  cwd: z.string().optional(),
  permissionMode: z.string().optional(),
});

export const systemSchema = z.looseObject({ type: z.literal('system'), subtype: z.string(), ...envelope });

export const assistantSchema = z.looseObject({
  type: z.literal('assistant'),
  message: z.looseObject({ id: z.string().optional(), model: z.string().optional(), content: z.array(contentBlock) }),
  parent_tool_use_id: z.string().nullable().optional(),
  /** Set on the CLI's synthetic messages for API failures (authentication_failed, rate_limit, unknown…). */
  error: z.string().optional(),
  ...envelope,
});

export const userSchema = z.looseObject({
  type: z.literal('user'),
  message: z.looseObject({ role: z.string(), content: z.union([z.string(), z.array(contentBlock)]) }),
  parent_tool_use_id: z.string().nullable().optional(),
  ...envelope,
});

const num = z.number().nullable().optional();

export const resultSchema = z.looseObject({
  type: z.literal('result'),
  subtype: z.string(),
  is_error: z.boolean(),
  result: z.string().optional(),
  errors: z.array(z.string()).optional(),
  terminal_reason: z.string().nullable().optional(),
  api_error_status: z.number().nullable().optional(),
  total_cost_usd: z.number().optional(),
  model_usage_since_last_result: z.record(z.string(), z.looseObject({ costUSD: z.number().optional() })).optional(),
  usage: z.looseObject({ input_tokens: num, output_tokens: num, cache_read_input_tokens: num }).optional(),
  num_turns: z.number().optional(),
  queued_turn_count: z.number().optional(),
  /** Client uuids of the user messages this turn consumed (newer CLIs echo them). */
  user_message_uuid: z.string().optional(),
  user_message_uuids: z.array(z.string()).optional(),
  ...envelope,
});

export const streamEventSchema = z.looseObject({
  type: z.literal('stream_event'),
  event: z.looseObject({ type: z.string() }),
  ...envelope,
});

export const controlRequestSchema = z.looseObject({
  type: z.literal('control_request'),
  request_id: z.string(),
  request: z.looseObject({ subtype: z.string() }),
});

export const controlResponseSchema = z.looseObject({
  type: z.literal('control_response'),
  response: z.looseObject({ subtype: z.string(), request_id: z.string().optional() }),
});

/** Any other message type: only `type` is checked (it is ignored, apart from proving the agent is alive). */
export const otherSchema = z.looseObject({ type: z.string().min(1) });

export type ClaudeInit = z.infer<typeof initSchema>;
export type ClaudeAssistant = z.infer<typeof assistantSchema>;
export type ClaudeUser = z.infer<typeof userSchema>;
export type ClaudeResult = z.infer<typeof resultSchema>;

/** One parsed stdout message, tagged by what switchboard makes of it. */
export type ClaudeMessage =
  | { kind: 'init'; value: ClaudeInit }
  | { kind: 'system'; value: z.infer<typeof systemSchema> }
  | { kind: 'assistant'; value: ClaudeAssistant }
  | { kind: 'user'; value: ClaudeUser }
  | { kind: 'result'; value: ClaudeResult }
  | { kind: 'stream_event'; value: z.infer<typeof streamEventSchema> }
  | { kind: 'control_request'; value: z.infer<typeof controlRequestSchema> }
  | { kind: 'control_response'; value: z.infer<typeof controlResponseSchema> }
  | { kind: 'other'; value: z.infer<typeof otherSchema> };

export type ParseResult = { ok: true; message: ClaudeMessage } | { ok: false; error: string };

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return `${issue.path.length > 0 ? issue.path.join('.') : '(message)'}: ${issue.message}`;
}

function attempt<K extends ClaudeMessage['kind'], S extends z.ZodType>(
  kind: K,
  schema: S,
  value: unknown,
  type: string,
): ParseResult {
  const parsed = schema.safeParse(value);
  if (!parsed.success) return { ok: false, error: `${type} message failed its schema (${issueText(parsed.error)})` };
  return { ok: true, message: { kind, value: parsed.data } as ClaudeMessage };
}

/** Parses an already-decoded stdout message; never throws. */
export function parseClaudeMessage(value: unknown): ParseResult {
  const head = otherSchema.safeParse(value);
  if (!head.success) return { ok: false, error: 'not a JSON object with a string "type"' };
  const type = head.data.type;
  switch (type) {
    case 'system':
      return (value as { subtype?: unknown }).subtype === 'init'
        ? attempt('init', initSchema, value, 'system/init')
        : attempt('system', systemSchema, value, type);
    case 'assistant':
      return attempt('assistant', assistantSchema, value, type);
    case 'user':
      return attempt('user', userSchema, value, type);
    case 'result':
      return attempt('result', resultSchema, value, type);
    case 'stream_event':
      return attempt('stream_event', streamEventSchema, value, type);
    case 'control_request':
      return attempt('control_request', controlRequestSchema, value, type);
    case 'control_response':
      return attempt('control_response', controlResponseSchema, value, type);
    default:
      return { ok: true, message: { kind: 'other', value: head.data } };
  }
}

/** Parses one stdout line (JSON, then the schemas); never throws. */
export function parseClaudeLine(line: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  return parseClaudeMessage(value);
}

/** Longest tool output kept in a toolResult event. */
const MAX_TOOL_OUTPUT = 16_000;

function toolOutput(content: z.infer<typeof toolResultBlock>['content']): string | undefined {
  if (content === undefined || content === null) return undefined;
  const text =
    typeof content === 'string'
      ? content
      : content.map((b) => (typeof b.text === 'string' ? b.text : `[${b.type}]`)).join('\n');
  return text.length > MAX_TOOL_OUTPUT
    ? `${text.slice(0, MAX_TOOL_OUTPUT)}… [${text.length - MAX_TOOL_OUTPUT} more characters]`
    : text;
}

/** The question text of an AskUserQuestion input (`questions[].question`, or `question`). */
export function askUserQuestionText(input: unknown): string {
  const parsed = z
    .looseObject({
      question: z.string().optional(),
      questions: z.array(z.looseObject({ question: z.string().optional() })).optional(),
    })
    .safeParse(input);
  if (!parsed.success) return 'The agent asked a question.';
  const texts = (parsed.data.questions ?? []).map((q) => q.question).filter((q): q is string => Boolean(q));
  if (parsed.data.question) texts.unshift(parsed.data.question);
  return texts.length > 0 ? texts.join('\n') : 'The agent asked a question.';
}

/** Name of Claude Code's tool for asking the user a question. */
export const ASK_USER_QUESTION = 'AskUserQuestion';

/**
 * Maps Claude Code messages to HarnessEvents, one message at a time. Keeps the little state one run needs: the previous
 * cumulative cost (for turn costs when a result lacks per-turn usage), the open tool calls (closed at turn end if the CLI
 * never reported them), and whether an interrupt was requested for the current turn.
 */
export class ClaudeEventMapper {
  #previousTotalUsd: number | undefined;
  #openTools = new Set<string>();
  #interruptRequested = false;

  /** Marks the current turn as interrupted by the harness: if it ends in error, the outcome is `interrupted`. */
  noteInterrupt(): void {
    this.#interruptRequested = true;
  }

  /** Tool calls started and not yet finished. */
  get openToolIds(): string[] {
    return [...this.#openTools];
  }

  /** Events for one message (an empty message still yields `activity`). */
  map(message: ClaudeMessage): HarnessEvent[] {
    switch (message.kind) {
      case 'init':
        return [
          {
            type: 'started',
            backendSessionId: message.value.session_id,
            ...(message.value.model ? { model: message.value.model } : {}),
          },
        ];
      case 'system':
        return [this.#system(message.value)];
      case 'assistant':
        return this.#assistant(message.value);
      case 'user':
        return this.#user(message.value);
      case 'result':
        return this.#result(message.value);
      case 'stream_event':
      case 'control_request':
      case 'control_response':
      case 'other':
        return [{ type: 'activity' }];
      default:
        message satisfies never;
        return [{ type: 'activity' }];
    }
  }

  #system(value: z.infer<typeof systemSchema>): HarnessEvent {
    if (value.subtype === 'api_retry') {
      const v = value as { attempt?: unknown; max_retries?: unknown; error_status?: unknown; error?: unknown };
      const status = typeof v.error_status === 'number' ? ` (HTTP ${v.error_status})` : '';
      return {
        type: 'warning',
        message: `Claude API request failed${status}: ${String(v.error ?? 'error')}; retry ${String(v.attempt ?? '?')} of ${String(v.max_retries ?? '?')}`,
      };
    }
    return { type: 'activity' };
  }

  #assistant(value: ClaudeAssistant): HarnessEvent[] {
    // Messages from inside a subagent (Task tool) are its own work: they prove activity but are not the session's output.
    if (value.parent_tool_use_id) return [{ type: 'activity' }];
    const events: HarnessEvent[] = [];
    for (const block of value.message.content) {
      if (block.type === 'text' && 'text' in block && typeof block.text === 'string') {
        if (!block.text.trim()) continue;
        events.push(
          value.error
            ? { type: 'warning', message: `Claude Code (${value.error}): ${block.text}` }
            : { type: 'text', text: block.text },
        );
      } else if (
        block.type === 'tool_use' &&
        'id' in block &&
        typeof block.id === 'string' &&
        'name' in block &&
        typeof block.name === 'string'
      ) {
        this.#openTools.add(block.id);
        const input = 'input' in block ? block.input : undefined;
        events.push({ type: 'tool', id: block.id, name: block.name, input });
        if (block.name === ASK_USER_QUESTION) events.push({ type: 'question', text: askUserQuestionText(input) });
      }
    }
    return events.length > 0 ? events : [{ type: 'activity' }];
  }

  #user(value: ClaudeUser): HarnessEvent[] {
    if (value.parent_tool_use_id || typeof value.message.content === 'string') return [{ type: 'activity' }];
    const events: HarnessEvent[] = [];
    for (const block of value.message.content) {
      if (block.type !== 'tool_result' || !('tool_use_id' in block) || typeof block.tool_use_id !== 'string') continue;
      const result = block as z.infer<typeof toolResultBlock>;
      this.#openTools.delete(result.tool_use_id);
      const output = toolOutput(result.content);
      events.push({
        type: 'toolResult',
        id: result.tool_use_id,
        isError: result.is_error === true,
        ...(output !== undefined ? { output } : {}),
      });
    }
    return events.length > 0 ? events : [{ type: 'activity' }];
  }

  #result(value: ClaudeResult): HarnessEvent[] {
    const events: HarnessEvent[] = [];
    // A tool the CLI never reported back on (an interrupted turn, a crash in the tool) is closed here.
    for (const id of this.#openTools)
      events.push({ type: 'toolResult', id, isError: true, output: 'no result: the turn ended first' });
    this.#openTools.clear();
    const outcome = classifyResult(value, { interruptRequested: this.#interruptRequested });
    const costUsd = turnCostUsd(value, this.#previousTotalUsd);
    if (typeof value.total_cost_usd === 'number') this.#previousTotalUsd = value.total_cost_usd;
    this.#interruptRequested = false;
    const usage = resultUsage(value);
    events.push({ type: 'turnEnd', outcome, costUsd, ...(usage ? { usage } : {}) });
    return events;
  }
}

// The stdout protocol of `codex exec --json` (Codex CLI 0.169) and its mapping to HarnessEvents.
//
// Lines: thread.started{thread_id} · turn.started · item.started|updated|completed{item} · turn.completed{usage} ·
// turn.failed{error:{message}} · error{message}. Only turn.completed / turn.failed end a turn; a top-level `error` is a
// warning ("Reconnecting... 2/5", the HTTP error text before a turn.failed), as is an `error` item ("Model metadata … not
// found"). Codex does not always emit item.started (file changes, web searches may only complete), so a completed tool
// item with no started one yields both `tool` and `toolResult`.
//
// Outcome and exit code: the turnEnd is held until the process exits (a few ms after the last line). turn.failed is a
// failure whatever the exit code (the CLI exits 1). turn.completed is a success only when the process exits 0 or is ended
// by a signal (the answer was complete before the stop); any other exit code makes it an execution_error, as with Gemini.
//
// Usage: turn.completed carries the *thread's* cumulative token counts (a resumed thread reported 300 after 200 + 100), so
// the per-turn usage is the difference from the previous totals, kept across turns by a `CodexUsageTracker`.
import { z } from 'zod';
import type { ExitInfo } from '../agent-process.ts';
import type { FailureReason, HarnessEvent, TurnOutcome, Usage } from '../harness.ts';
import { decodeTypedLine, isObject, schemaProblem } from '../json-line.ts';
import type { TurnParser } from '../per-turn-run.ts';
import type { CodexUsageTracker } from './codex-usage.ts';
import { usageTotalsSchema } from './codex-usage.ts';

const id = z.string().min(1);
const ITEM_SCHEMAS = {
  agent_message: z.object({ id, text: z.string() }),
  reasoning: z.object({ id, text: z.string().optional() }),
  command_execution: z.object({
    id,
    command: z.string(),
    aggregated_output: z.string().optional(),
    exit_code: z.number().int().nullable().optional(),
    status: z.string().optional(),
  }),
  file_change: z.object({
    id,
    changes: z.array(z.object({ path: z.string(), kind: z.string() })),
    status: z.string().optional(),
  }),
  mcp_tool_call: z.object({
    id,
    server: z.string(),
    tool: z.string(),
    arguments: z.unknown().optional(),
    result: z
      .object({ content: z.array(z.unknown()).optional(), structured_content: z.unknown().optional() })
      .nullable()
      .optional(),
    error: z.object({ message: z.string() }).nullable().optional(),
    status: z.string().optional(),
  }),
  web_search: z.object({ id, query: z.string(), action: z.unknown().optional() }),
  todo_list: z.object({ id, items: z.array(z.object({ text: z.string(), completed: z.boolean() })) }),
  plan: z.object({ id, text: z.string() }),
  error: z.object({ id, message: z.string() }),
  request_user_input: z.object({
    id,
    call_id: z.string().optional(),
    questions: z.array(z.object({ id: z.string().optional(), header: z.string().optional(), question: z.string() })),
  }),
} as const;

type ItemSchemas = typeof ITEM_SCHEMAS;
/** One known item, tagged by its type. */
export type CodexItem = { [K in keyof ItemSchemas]: { type: K } & z.infer<ItemSchemas[K]> }[keyof ItemSchemas];

const LINE_SCHEMAS = {
  'thread.started': z.object({ thread_id: id }),
  'turn.started': z.object({}),
  'turn.completed': z.object({ usage: usageTotalsSchema.optional() }),
  'turn.failed': z.object({ error: z.object({ message: z.string() }) }),
  error: z.object({ message: z.string() }),
} as const;

/** One parsed stdout line. */
export type CodexLine =
  | { kind: 'thread.started'; threadId: string }
  | { kind: 'turn.started' }
  | { kind: 'turn.completed'; usage?: z.infer<typeof usageTotalsSchema> }
  | { kind: 'turn.failed'; message: string }
  | { kind: 'error'; message: string }
  | { kind: 'item'; phase: 'started' | 'updated' | 'completed'; item: CodexItem }
  | { kind: 'unknown'; type: string };

const PHASES = { 'item.started': 'started', 'item.updated': 'updated', 'item.completed': 'completed' } as const;

/** Parses one stdout line; returns the line or the reason it is malformed (not JSON, no type, schema violation). */
export function parseCodexLine(line: string): { ok: true; line: CodexLine } | { ok: false; error: string } {
  const decoded = decodeTypedLine(line);
  if (!decoded.ok) return decoded;
  const { value: raw, type } = decoded;
  if (Object.hasOwn(PHASES, type)) {
    const item = raw.item;
    if (!isObject(item) || typeof item.type !== 'string')
      return { ok: false, error: `bad "${type}": no item with a string "type"` };
    if (!Object.hasOwn(ITEM_SCHEMAS, item.type))
      return { ok: true, line: { kind: 'unknown', type: `${type}:${item.type}` } };
    const itemType = item.type as keyof ItemSchemas;
    const parsed = ITEM_SCHEMAS[itemType].safeParse(item);
    if (!parsed.success) return schemaProblem(`${type}:${itemType}`, parsed.error);
    const phase = PHASES[type as keyof typeof PHASES];
    return { ok: true, line: { kind: 'item', phase, item: { ...parsed.data, type: itemType } as CodexItem } };
  }
  if (!Object.hasOwn(LINE_SCHEMAS, type)) return { ok: true, line: { kind: 'unknown', type } };
  const known = type as keyof typeof LINE_SCHEMAS;
  const parsed = LINE_SCHEMAS[known].safeParse(raw);
  if (!parsed.success) return schemaProblem(known, parsed.error);
  const value = parsed.data as Record<string, unknown>;
  switch (known) {
    case 'thread.started':
      return { ok: true, line: { kind: known, threadId: value.thread_id as string } };
    case 'turn.started':
      return { ok: true, line: { kind: known } };
    case 'turn.completed':
      return {
        ok: true,
        line: value.usage ? { kind: known, usage: value.usage as z.infer<typeof usageTotalsSchema> } : { kind: known },
      };
    case 'turn.failed':
      return { ok: true, line: { kind: known, message: (value.error as { message: string }).message } };
    case 'error':
      return { ok: true, line: { kind: known, message: value.message as string } };
  }
}

/**
 * The outcome of a `turn.failed` message. Codex 0.169 words API errors as "unexpected status 401 Unauthorized: …" or
 * "exceeded retry limit, last status: 429 …" (status extracted → api_error), prints the bare JSON body
 * (`{"error":{"message":…,"type":…}}`) for an HTTP 400 (→ api_error 400), and replaces a 500 with "We're currently
 * experiencing high demand…" and a context-length 400 with "…ran out of room in the model's context window…" (→ api_error
 * without a status). Anything else is an execution_error.
 */
export function codexFailure(message: string): Extract<TurnOutcome, { ok: false }> {
  const status = /\b(?:unexpected status|last status:?)\s+(\d{3})\b/i.exec(message)?.[1];
  if (status) return { ok: false, reason: 'api_error', message, apiErrorStatus: Number(status) };
  if (isOpenAiErrorBody(message)) return { ok: false, reason: 'api_error', message, apiErrorStatus: 400 };
  const reason: FailureReason = /experiencing high demand|context window/i.test(message)
    ? 'api_error'
    : 'execution_error';
  return { ok: false, reason, message };
}

function isOpenAiErrorBody(message: string): boolean {
  try {
    const body: unknown = JSON.parse(message);
    return isObject(body) && isObject(body.error) && typeof body.error.message === 'string';
  } catch {
    return false;
  }
}

/** `text` cut to `max` characters (with an ellipsis). */
export function shorten(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

type ToolItem = Extract<CodexItem, { type: 'command_execution' | 'file_change' | 'mcp_tool_call' | 'web_search' }>;

function isTool(item: CodexItem): item is ToolItem {
  return (
    item.type === 'command_execution' ||
    item.type === 'file_change' ||
    item.type === 'mcp_tool_call' ||
    item.type === 'web_search'
  );
}

/** The `tool` event for a tool item: shell {command}, apply_patch {path, changes}, mcp:server/tool {arguments}, web_search {query}. */
export function toolEvent(item: ToolItem): HarnessEvent & { type: 'tool' } {
  switch (item.type) {
    case 'command_execution':
      return { type: 'tool', id: item.id, name: 'shell', input: { command: item.command } };
    case 'file_change':
      return {
        type: 'tool',
        id: item.id,
        name: 'apply_patch',
        input: { path: item.changes.map((c) => c.path).join(', '), changes: item.changes },
      };
    case 'mcp_tool_call':
      return { type: 'tool', id: item.id, name: `mcp:${item.server}/${item.tool}`, input: item.arguments ?? {} };
    case 'web_search':
      return { type: 'tool', id: item.id, name: 'web_search', input: { query: item.query } };
  }
}

const FAILED = new Set(['failed', 'declined']);

/** The `toolResult` event for a completed tool item; isError from exit_code ≠ 0, status failed/declined, or an MCP error. */
export function toolResultEvent(item: ToolItem): HarnessEvent & { type: 'toolResult' } {
  const failed = 'status' in item && FAILED.has(item.status ?? '');
  switch (item.type) {
    case 'command_execution': {
      const isError = failed || (item.exit_code !== null && item.exit_code !== undefined && item.exit_code !== 0);
      return { type: 'toolResult', id: item.id, isError, output: item.aggregated_output ?? '' };
    }
    case 'file_change':
      return {
        type: 'toolResult',
        id: item.id,
        isError: failed,
        output: item.changes.map((c) => `${c.kind} ${c.path}`).join('\n'),
      };
    case 'mcp_tool_call': {
      const output =
        item.error?.message ??
        mcpText(item.result?.content) ??
        (item.result?.structured_content !== undefined ? JSON.stringify(item.result.structured_content) : undefined);
      return {
        type: 'toolResult',
        id: item.id,
        isError: failed || !!item.error,
        ...(output !== undefined ? { output } : {}),
      };
    }
    case 'web_search':
      return { type: 'toolResult', id: item.id, isError: false };
  }
}

function mcpText(content: unknown[] | undefined): string | undefined {
  if (!content || content.length === 0) return undefined;
  return content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : JSON.stringify(c))).join('\n');
}

/**
 * The events of Codex items (shared by `codex exec --json` and `codex app-server`, whose items are converted to these
 * shapes): a tool item yields `tool` once (on start, or on completion when it never started) and `toolResult` on
 * completion; a completed agent message its `text`; an error item a warning; a request_user_input its `question` once.
 */
export class CodexItemEvents {
  #started = new Set<string>();
  #asked = new Set<string>();

  /** The events of one item in one phase. */
  events(phase: 'started' | 'updated' | 'completed', item: CodexItem): HarnessEvent[] {
    if (isTool(item)) {
      if (phase === 'started') {
        if (this.#started.has(item.id)) return [{ type: 'activity' }];
        this.#started.add(item.id);
        return [toolEvent(item)];
      }
      if (phase === 'updated') return [{ type: 'activity' }];
      const out: HarnessEvent[] = this.#started.has(item.id) ? [] : [toolEvent(item)];
      this.#started.add(item.id);
      return [...out, toolResultEvent(item)];
    }
    switch (item.type) {
      case 'agent_message':
        return phase === 'completed' && item.text.length > 0
          ? [{ type: 'text', text: item.text }]
          : [{ type: 'activity' }];
      case 'error':
        return phase === 'completed'
          ? [{ type: 'warning', message: `Codex warning: ${item.message}` }]
          : [{ type: 'activity' }];
      case 'request_user_input': {
        const text = item.questions
          .map((q) => q.question)
          .filter(Boolean)
          .join('\n');
        if (this.#asked.has(item.id) || !text) return [{ type: 'activity' }];
        this.#asked.add(item.id);
        return [{ type: 'question', text }];
      }
      case 'reasoning':
      case 'plan':
      case 'todo_list':
        return [{ type: 'activity' }];
      default:
        item satisfies never;
        return [{ type: 'activity' }];
    }
  }
}

/**
 * Parser for one Codex turn (one process), see the top of this file. `usage` is shared by the turns of a run; `model`
 * (what the run asked for with -m) is reported on `started` since the JSONL does not name it.
 */
export class CodexTurnParser implements TurnParser {
  #usage: CodexUsageTracker;
  #model: string | undefined;
  #items = new CodexItemEvents();
  #end: { outcome: TurnOutcome; usage?: Usage } | null = null;

  constructor(options: { usage: CodexUsageTracker; model?: string }) {
    this.#usage = options.usage;
    this.#model = options.model;
  }

  line(line: string): HarnessEvent[] {
    if (!line.trim()) return [];
    const parsed = parseCodexLine(line);
    if (!parsed.ok)
      return [
        {
          type: 'warning',
          malformed: true,
          message: `dropped a malformed Codex output line (${parsed.error}): ${shorten(line)}`,
        },
      ];
    const event = parsed.line;
    switch (event.kind) {
      case 'thread.started':
        return [{ type: 'started', backendSessionId: event.threadId, ...(this.#model ? { model: this.#model } : {}) }];
      case 'turn.completed': {
        const usage = event.usage ? this.#usage.turnUsage(event.usage) : undefined;
        this.#end = { outcome: { ok: true }, ...(usage ? { usage } : {}) };
        return [{ type: 'activity' }];
      }
      case 'turn.failed':
        this.#end = { outcome: codexFailure(event.message) };
        return [{ type: 'activity' }];
      case 'error':
        return [{ type: 'warning', message: `Codex error: ${event.message}` }];
      case 'item':
        return this.#items.events(event.phase, event.item);
      case 'turn.started':
      case 'unknown':
        return [{ type: 'activity' }];
      default:
        event satisfies never;
        return [{ type: 'activity' }];
    }
  }

  exit(info: ExitInfo): HarnessEvent[] {
    const end = this.#end;
    if (!end) return [];
    let outcome = end.outcome;
    if (outcome.ok && info.code !== 0 && info.code !== null) {
      outcome = {
        ok: false,
        reason: 'execution_error',
        message: `Codex exited with code ${info.code} after reporting the turn completed`,
      };
    }
    return [{ type: 'turnEnd', outcome, costUsd: 0, ...(end.usage ? { usage: end.usage } : {}) }];
  }
}

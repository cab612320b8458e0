// The stdout protocol of `gemini -p … --output-format stream-json` (Gemini CLI 0.61) and its mapping to HarnessEvents.
//
// Outcome model: the CLI prints one `result` per process, but the exit code still matters after it (an API error exits
// with the HTTP status mod 256, e.g. 144 for a 400; 41 auth, 42 input, 53 turn limit). So the parser *holds* the result
// and emits the turn's single `turnEnd` from `exit()`, deciding the outcome from `result.status` AND the exit code: a
// non-zero exit after `status:"success"` is a failure. The cost is a few ms of delay (the CLI exits ~30 ms after its
// result line).
import { z } from 'zod';
import type { ExitInfo } from '../agent-process.ts';
import type { HarnessEvent, TurnOutcome, Usage } from '../harness.ts';
import { decodeTypedLine, schemaProblem } from '../json-line.ts';
import type { TurnParser } from '../per-turn-run.ts';

const initSchema = z.object({ type: z.literal('init'), session_id: z.string().min(1), model: z.string().optional() });

const messageSchema = z.object({
  type: z.literal('message'),
  /** 'user' (the prompt echoed) or 'assistant'. */
  role: z.string(),
  content: z.string(),
  /** Assistant text arrives in `delta: true` chunks of one message. */
  delta: z.boolean().optional(),
});

const toolUseSchema = z.object({
  type: z.literal('tool_use'),
  tool_name: z.string().min(1),
  tool_id: z.string().min(1),
  parameters: z.unknown().optional(),
});

const errorDetail = z.object({ type: z.string().optional(), message: z.string() });

const toolResultSchema = z.object({
  type: z.literal('tool_result'),
  tool_id: z.string().min(1),
  /** 'success' | 'error'. */
  status: z.string(),
  output: z.string().optional(),
  error: errorDetail.optional(),
});

/** Non-fatal: loop detected, invalid stream, blocked agent… (`severity` 'warning' | 'error'). */
const errorSchema = z.object({ type: z.literal('error'), severity: z.string().optional(), message: z.string() });

const count = z.number().nonnegative().optional();
const statsSchema = z.object({
  total_tokens: count,
  input_tokens: count,
  output_tokens: count,
  cached: count,
  input: count,
  duration_ms: count,
  tool_calls: count,
});

const resultSchema = z.object({
  type: z.literal('result'),
  status: z.enum(['success', 'error']),
  error: errorDetail.optional(),
  stats: statsSchema.optional(),
});

export type GeminiInit = z.infer<typeof initSchema>;
export type GeminiMessage = z.infer<typeof messageSchema>;
export type GeminiToolUse = z.infer<typeof toolUseSchema>;
export type GeminiToolResult = z.infer<typeof toolResultSchema>;
export type GeminiError = z.infer<typeof errorSchema>;
export type GeminiResult = z.infer<typeof resultSchema>;

/** One parsed stdout line. */
export type GeminiLine =
  | { kind: 'init'; value: GeminiInit }
  | { kind: 'message'; value: GeminiMessage }
  | { kind: 'tool_use'; value: GeminiToolUse }
  | { kind: 'tool_result'; value: GeminiToolResult }
  | { kind: 'error'; value: GeminiError }
  | { kind: 'result'; value: GeminiResult }
  | { kind: 'unknown'; type: string };

const SCHEMAS = {
  init: initSchema,
  message: messageSchema,
  tool_use: toolUseSchema,
  tool_result: toolResultSchema,
  error: errorSchema,
  result: resultSchema,
} as const;

function isKnown(type: string): type is keyof typeof SCHEMAS {
  return Object.hasOwn(SCHEMAS, type);
}

function shorten(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Parses one stdout line; returns the line or the reason it is malformed (not JSON, no type, schema violation). */
export function parseGeminiLine(line: string): { ok: true; line: GeminiLine } | { ok: false; error: string } {
  const decoded = decodeTypedLine(line);
  if (!decoded.ok) return decoded;
  const { value: raw, type } = decoded;
  if (!isKnown(type)) return { ok: true, line: { kind: 'unknown', type } };
  const parsed = SCHEMAS[type].safeParse(raw);
  if (!parsed.success) return schemaProblem(type, parsed.error);
  return { ok: true, line: { kind: type, value: parsed.data } as GeminiLine };
}

/** Token counts of one turn from `result.stats` (one process = one turn, so they are per turn). */
export function usageFromStats(stats: GeminiResult['stats']): Usage | undefined {
  if (!stats || (stats.input_tokens === undefined && stats.output_tokens === undefined)) return undefined;
  return {
    inputTokens: stats.input_tokens ?? 0,
    outputTokens: stats.output_tokens ?? 0,
    ...(stats.cached !== undefined ? { cachedInputTokens: stats.cached } : {}),
  };
}

/** Exit codes of Gemini CLI 0.61 (FatalError subclasses). */
export const GEMINI_EXIT = {
  auth: 41,
  input: 42,
  config: 52,
  turnLimit: 53,
  toolExecution: 54,
  cancelled: 130,
} as const;

const AUTH_HINT =
  'Gemini CLI could not authenticate. Set GEMINI_API_KEY (harnesses.gemini.env); with GOOGLE_GEMINI_BASE_URL the user ' +
  'settings must also select "gemini-api-key" (switchboard writes it to ~/.gemini/settings.json when absent)';

/** The HTTP status an exit code stands for: the CLI exits with `status & 0xff` on API errors (400 → 144 … 511 → 255). */
function httpStatusOf(code: number | null): number | undefined {
  return code !== null && code >= 144 && code <= 255 ? code + 256 : undefined;
}

/** The HTTP status quoted in an API error message (`{"error":{"code":400,…}}`), if any. */
function statusInMessage(message: string | undefined): number | undefined {
  const match = message ? /"code"\s*:\s*(\d{3})\b/.exec(message) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * Decides a turn's outcome from the held `result` (or null), the exit, and the last non-fatal `error` event message.
 * Exit code first (41 auth, 53 turn limit, 130 cancelled), then `error.type`, then an HTTP status hidden in the exit code.
 * A success result stays ok when the process ended by a signal (the answer was complete before the stop).
 */
export function geminiOutcome(result: GeminiResult, info: ExitInfo, lastError?: string): TurnOutcome {
  const code = info.code;
  if (result.status === 'success' && (code === 0 || code === null)) return { ok: true };
  const type = result.error?.type ?? '';
  const detail = result.error?.message ?? lastError;
  const exited = code === null ? `was killed by ${info.signal ?? 'a signal'}` : `exited with code ${code}`;
  const message =
    detail ??
    (result.status === 'success'
      ? `Gemini CLI ${exited} after reporting success`
      : `Gemini CLI reported an error and ${exited}`);
  if (code === GEMINI_EXIT.turnLimit || /TurnLimited/i.test(type)) return { ok: false, reason: 'max_turns', message };
  if (code === GEMINI_EXIT.cancelled || /Cancel/i.test(type)) return { ok: false, reason: 'interrupted', message };
  if (code === GEMINI_EXIT.auth || /Authentication/i.test(type)) {
    return { ok: false, reason: 'execution_error', message: `${message} (${AUTH_HINT})` };
  }
  const status = statusInMessage(detail) ?? httpStatusOf(code);
  if (/api/i.test(type) || /API Error/i.test(detail ?? '') || status !== undefined) {
    return { ok: false, reason: 'api_error', message, ...(status !== undefined ? { apiErrorStatus: status } : {}) };
  }
  return { ok: false, reason: 'execution_error', message };
}

/**
 * Parser for one Gemini turn (one process): init → started; assistant `delta` chunks → one `text` per assistant message
 * (flushed by the next non-message event, the result, or the exit); user messages → activity; tool_use → tool (plus a
 * `question` for the `ask_user` tool); tool_result → toolResult; error → warning; result → held until `exit()` (see above).
 */
export class GeminiTurnParser implements TurnParser {
  #text: string[] = [];
  #result: GeminiResult | null = null;
  #lastError: string | undefined;

  line(line: string): HarnessEvent[] {
    if (!line.trim()) return [];
    const parsed = parseGeminiLine(line);
    if (!parsed.ok)
      return [
        {
          type: 'warning',
          malformed: true,
          message: `dropped a malformed Gemini CLI output line (${parsed.error}): ${shorten(line)}`,
        },
      ];
    const event = parsed.line;
    if (event.kind === 'message') return this.#message(event.value);
    const out = this.#flush();
    switch (event.kind) {
      case 'init':
        out.push({
          type: 'started',
          backendSessionId: event.value.session_id,
          ...(event.value.model ? { model: event.value.model } : {}),
        });
        break;
      case 'tool_use':
        out.push({
          type: 'tool',
          id: event.value.tool_id,
          name: event.value.tool_name,
          input: event.value.parameters ?? {},
        });
        if (event.value.tool_name === 'ask_user') {
          const text = questionText(event.value.parameters);
          if (text) out.push({ type: 'question', text });
        }
        break;
      case 'tool_result': {
        const r = event.value;
        const output = r.output ?? r.error?.message;
        out.push({
          type: 'toolResult',
          id: r.tool_id,
          isError: r.status !== 'success',
          ...(output !== undefined ? { output } : {}),
        });
        break;
      }
      case 'error':
        this.#lastError = event.value.message;
        out.push({ type: 'warning', message: `Gemini CLI ${event.value.severity ?? 'error'}: ${event.value.message}` });
        break;
      case 'result':
        this.#result = event.value;
        if (out.length === 0) out.push({ type: 'activity' });
        break;
      case 'unknown':
        if (out.length === 0) out.push({ type: 'activity' });
        break;
    }
    return out;
  }

  exit(info: ExitInfo): HarnessEvent[] {
    const out = this.#flush();
    const result = this.#result;
    if (!result) return out;
    const usage = usageFromStats(result.stats);
    out.push({
      type: 'turnEnd',
      outcome: geminiOutcome(result, info, this.#lastError),
      costUsd: 0,
      ...(usage ? { usage } : {}),
    });
    return out;
  }

  #message(message: GeminiMessage): HarnessEvent[] {
    if (message.role !== 'assistant') return [{ type: 'activity' }];
    if (message.delta === true) {
      this.#text.push(message.content);
      return [{ type: 'activity' }];
    }
    // A whole (non-delta) assistant message: it ends whatever was streaming and stands on its own.
    const out = this.#flush();
    if (message.content.length > 0) out.push({ type: 'text', text: message.content });
    return out.length > 0 ? out : [{ type: 'activity' }];
  }

  #flush(): HarnessEvent[] {
    const text = this.#text.join('');
    this.#text = [];
    return text.length > 0 ? [{ type: 'text', text }] : [];
  }
}

/** The question texts of an `ask_user` call (`{questions:[{question}]}`), joined by newlines. */
function questionText(parameters: unknown): string {
  const questions = (parameters as { questions?: unknown } | undefined)?.questions;
  if (!Array.isArray(questions)) return '';
  return questions
    .map((q) =>
      q && typeof q === 'object' && typeof (q as { question?: unknown }).question === 'string'
        ? (q as { question: string }).question
        : '',
    )
    .filter(Boolean)
    .join('\n');
}

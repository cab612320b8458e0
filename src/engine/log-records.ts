// The records of an engine session's JSONL log (store/engine-logs.ts writes them untyped). History is incremental:
// one record per message, model reply, tool result, reply sent and turn boundary — never the whole context.
import { z } from 'zod';
import type { ToolCall } from '../inference/types.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import type { SessionDescriptor } from './api.ts';

/**
 * How an engine turn ended: `limit` = tool iterations exhausted; `internal_error` = cut off (crash) or an engine fault.
 * (A coding agent's turn ends with a TurnOutcome, coding/harness.ts.)
 */
export type EngineTurnOutcome = 'ok' | 'error' | 'limit' | 'internal_error';

/** Who a queued message comes from: a person on a connector, or the daemon/another session. */
export type IncomingKind = 'user' | 'system';

export type IncomingEntry = {
  type: 'incoming';
  /** The connector's message id (user), or an engine-made id (system). Unique per session. */
  messageId: string;
  kind: IncomingKind;
  /** Where it came from: the channel string (user) or `wake`, `hook`, `subagent:<name>`, `parent:<id>`, … (system). */
  origin: string;
  text: string;
  /** The sender's user id on the connector (user messages). */
  from?: string;
  /** The connector message id a reply should answer (user messages). */
  replyTo?: string;
};

/** Every kind of record an engine session's log holds. */
export type EngineLogEntry =
  | { type: 'session_created'; descriptor: SessionDescriptor }
  | IncomingEntry
  | { type: 'turn_start'; messageId: string }
  | { type: 'assistant'; text: string; toolCalls: ToolCall[] }
  | { type: 'tool_result'; toolCallId: string; name: string; content: string; isError: boolean }
  | { type: 'outgoing'; text: string; target: string }
  | { type: 'turn_end'; messageId: string; outcome: EngineTurnOutcome; error?: string };

export type EngineLogType = EngineLogEntry['type'];

/** A record as read back: the entry plus the log envelope. */
export type EngineLogRecord = EngineLogEntry & { v: 1; seq: number; ts: number };

const toolCall = z.object({ id: z.string(), name: z.string(), input: z.unknown() });

const entrySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session_created'), descriptor: z.unknown() }),
  z.object({
    type: z.literal('incoming'),
    messageId: z.string().min(1),
    kind: z.enum(['user', 'system']),
    origin: z.string(),
    text: z.string(),
    from: z.string().optional(),
    replyTo: z.string().optional(),
  }),
  z.object({ type: z.literal('turn_start'), messageId: z.string().min(1) }),
  z.object({ type: z.literal('assistant'), text: z.string(), toolCalls: z.array(toolCall) }),
  z.object({
    type: z.literal('tool_result'),
    toolCallId: z.string(),
    name: z.string(),
    content: z.string(),
    isError: z.boolean(),
  }),
  z.object({ type: z.literal('outgoing'), text: z.string(), target: z.string() }),
  z.object({
    type: z.literal('turn_end'),
    messageId: z.string().min(1),
    outcome: z.enum(['ok', 'error', 'limit', 'internal_error']),
    error: z.string().optional(),
  }),
]);

/**
 * Checks a raw log record against the record types; returns it typed, or null for an unknown type or a record with
 * missing fields (the caller skips it). The descriptor of `session_created` is checked by descriptor.ts, not here.
 */
export function asEngineRecord(record: LogRecord): EngineLogRecord | null {
  const result = entrySchema.safeParse(record);
  return result.success ? (record as unknown as EngineLogRecord) : null;
}

/** The entry of a log record, without envelope fields. */
export type EntryOf<T extends EngineLogType> = Extract<EngineLogEntry, { type: T }>;

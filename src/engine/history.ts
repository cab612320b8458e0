// A session's conversation as the model sees it, rebuilt from the log and bounded: the last `turns` turns whose
// messages fit in `maxChars` (the newest turn always stays). Turns are kept whole, so every tool call keeps its
// result; a call without a recorded result (a cut-off turn) gets an error result so pairs stay intact.
import type { ChatMessage, ToolCall } from '../inference/types.ts';
import type { EngineLogRecord, EngineTurnOutcome, IncomingEntry } from './log-records.ts';
import { renderSystemMessage } from './prompts.ts';

/** What one turn recorded between its start and end. */
export type TurnStep =
  | { type: 'assistant'; text: string; toolCalls: ToolCall[] }
  | { type: 'tool_result'; toolCallId: string; name: string; content: string; isError: boolean }
  | { type: 'outgoing'; text: string; target: string };

/** One turn: the message it answered, what happened, how it ended. */
export interface TurnLog {
  messageId: string;
  incoming: IncomingEntry | null;
  steps: TurnStep[];
  outcome: EngineTurnOutcome | null;
}

export interface HistoryLimits {
  turns: number;
  maxChars: number;
}

/** The user-role content of a queued message. */
export function renderIncoming(incoming: Pick<IncomingEntry, 'kind' | 'origin' | 'text'>): string {
  return incoming.kind === 'user' ? incoming.text : renderSystemMessage(incoming.origin, incoming.text);
}

const MISSING_RESULT = 'No result: the turn was interrupted before this tool finished.';

/** Converts one turn to chat messages; empty when its message is unknown (a damaged log). */
export function turnMessages(turn: TurnLog): ChatMessage[] {
  if (!turn.incoming) return [];
  const out: ChatMessage[] = [{ role: 'user', content: renderIncoming(turn.incoming) }];
  const results = new Map<string, Extract<TurnStep, { type: 'tool_result' }>>();
  for (const step of turn.steps) if (step.type === 'tool_result') results.set(step.toolCallId, step);
  let answered = false;
  for (const step of turn.steps) {
    if (step.type !== 'assistant') continue;
    out.push({
      role: 'assistant',
      content: step.text,
      ...(step.toolCalls.length > 0 ? { toolCalls: step.toolCalls } : {}),
    });
    for (const call of step.toolCalls) {
      const result = results.get(call.id);
      out.push({
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: result?.content ?? MISSING_RESULT,
        isError: result?.isError ?? true,
      });
    }
    answered = step.toolCalls.length === 0;
  }
  if (!answered) {
    // The turn ended without a final answer (error, limit, crash): say what the other side saw.
    const sent = [...turn.steps].reverse().find((s) => s.type === 'outgoing');
    const note = sent?.type === 'outgoing' ? sent.text : `(turn ended: ${turn.outcome ?? 'interrupted'})`;
    out.push({ role: 'assistant', content: note });
  }
  return out;
}

function size(messages: ChatMessage[]): number {
  let n = 0;
  for (const m of messages) {
    n += m.content.length;
    if (m.role === 'assistant' && m.toolCalls) n += JSON.stringify(m.toolCalls).length;
  }
  return n;
}

/** The completed turns of one session, bounded, turned into chat messages on demand. */
export class History {
  #turns: { turn: TurnLog; messages: ChatMessage[]; size: number }[] = [];
  #limits: HistoryLimits;

  constructor(limits: HistoryLimits, turns: TurnLog[] = []) {
    this.#limits = limits;
    for (const turn of turns) this.add(turn);
  }

  /** Adds a finished turn (oldest turns beyond the limits drop out). */
  add(turn: TurnLog): void {
    const messages = turnMessages(turn);
    if (messages.length === 0) return;
    this.#turns.push({ turn, messages, size: size(messages) });
    while (this.#turns.length > this.#limits.turns) this.#turns.shift();
    let total = this.#turns.reduce((n, t) => n + t.size, 0);
    while (this.#turns.length > 1 && total > this.#limits.maxChars)
      total -= (this.#turns.shift() as { size: number }).size;
  }

  /** Number of turns kept. */
  get length(): number {
    return this.#turns.length;
  }

  /** The kept turns as one message list, oldest first. */
  messages(): ChatMessage[] {
    return this.#turns.flatMap((t) => t.messages);
  }
}

/**
 * Collects the last `turns` completed turns from records visited newest-first (a backward log scan). Call `visit` for
 * each record until it returns false, then `result()`.
 */
export class HistoryCollector {
  #wanted: number;
  #turns: TurnLog[] = [];
  #current: TurnLog | null = null;
  #needIncoming = new Map<string, TurnLog>();

  constructor(turns: number) {
    this.#wanted = turns;
  }

  /** Takes the next older record; returns false once enough turns (and their messages) are collected. */
  visit(record: EngineLogRecord): boolean {
    switch (record.type) {
      case 'turn_end':
        this.#current = { messageId: record.messageId, incoming: null, steps: [], outcome: record.outcome };
        break;
      case 'assistant':
      case 'tool_result':
      case 'outgoing': {
        const { v: _v, seq: _seq, ts: _ts, ...step } = record;
        this.#current?.steps.unshift(step);
        break;
      }
      case 'turn_start': {
        const turn =
          this.#current && this.#current.messageId === record.messageId
            ? this.#current
            : { messageId: record.messageId, incoming: null, steps: this.#current?.steps ?? [], outcome: null };
        this.#current = null;
        this.#turns.unshift(turn);
        this.#needIncoming.set(turn.messageId, turn);
        break;
      }
      case 'incoming': {
        const turn = this.#needIncoming.get(record.messageId);
        if (turn) {
          const { v: _v, seq: _seq, ts: _ts, ...entry } = record;
          turn.incoming = entry;
          this.#needIncoming.delete(record.messageId);
        }
        break;
      }
      case 'session_created':
        break;
    }
    return this.#turns.length < this.#wanted || this.#needIncoming.size > 0;
  }

  /** The collected turns, oldest first. */
  result(): TurnLog[] {
    return this.#turns.slice(-this.#wanted);
  }
}

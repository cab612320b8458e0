// What a coding session's agent says and does within a turn: its output text, tool calls and their results, questions
// and warnings, each written to the log (output also to the output buffer) and signalled; and the facts the turn's end
// needs (tool calls still open, the last text, whether it asked the user something, malformed lines seen).
import type { Logger } from '../core/logger.ts';
import { roundUsd } from '../core/usd.ts';
import type { HarnessEvent } from './harness.ts';
import type { OutputBuffer } from './output-buffer.ts';
import type { SessionLogEntry } from './session-log.ts';
import { endsWithQuestion } from './session-text.ts';

/** A signal about the turn's content; the session adds itself and passes it on as a `SessionSignal`. */
export type TurnSignal =
  | { type: 'output'; text: string; seq: number }
  | { type: 'tool'; name: string; input: unknown }
  | { type: 'question'; text: string };

/** Where a turn's content goes: the log, the output buffer, the session's signals and its logger. */
export interface SessionTurnDeps {
  sessionId: string;
  output: OutputBuffer;
  logger: Logger;
  write: (entry: SessionLogEntry) => { seq: number };
  emit: (signal: TurnSignal) => void;
}

/** The content of one session's current turn: recorded as it arrives, with what the turn's end needs to know. */
export class SessionTurn {
  readonly #deps: SessionTurnDeps;
  readonly #openTools = new Set<string>();
  #asked = false;
  #lastText = '';
  #malformed = 0;

  constructor(deps: SessionTurnDeps) {
    this.#deps = deps;
  }

  /** Tool calls started and not yet answered by a result. */
  get openToolCalls(): number {
    return this.#openTools.size;
  }

  /** Warnings about malformed lines from the agent, over the session's life. */
  get malformedLines(): number {
    return this.#malformed;
  }

  /** Assistant text: written, added to the output buffer at its seq, and signalled (`output`). */
  text(text: string): void {
    this.#lastText = text;
    const { seq } = this.#deps.write({ type: 'output', text });
    this.#deps.output.push(seq, text);
    this.#deps.emit({ type: 'output', text, seq });
  }

  /** A tool call started: open until its result, written and signalled (`tool`). */
  tool({ id, name, input }: HarnessEvent & { type: 'tool' }): void {
    this.#openTools.add(id);
    this.#deps.write({ type: 'tool', id, name, input });
    this.#deps.emit({ type: 'tool', name, input });
  }

  /** A tool call's result: the call is no longer open; written. */
  toolResult({ id, isError, output }: HarnessEvent & { type: 'toolResult' }): void {
    this.#openTools.delete(id);
    this.#deps.write({ type: 'toolResult', id, isError, ...(output !== undefined ? { output } : {}) });
  }

  /** The agent asked the user something explicitly: written and signalled (`question`). */
  question(text: string): void {
    this.#asked = true;
    this.#deps.write({ type: 'question', text });
    this.#deps.emit({ type: 'question', text });
  }

  /** A permission request was answered: an answered question is not a question left open at the turn's end. */
  answered(): void {
    this.#asked = false;
  }

  /** A warning from the harness (counted when about a malformed line): written and logged. */
  warning({ message, malformed }: HarnessEvent & { type: 'warning' }): void {
    if (malformed) this.#malformed += 1;
    this.#deps.write({ type: 'warning', message, ...(malformed ? { malformed: true } : {}) });
    this.#deps.logger.warn({ session: this.#deps.sessionId, malformed: malformed ?? false }, message);
  }

  /**
   * Writes the turn's `turn` record: its outcome, usage and cost (never negative), and the session's total cost after
   * it (`costBeforeUsd` plus the turn's). Returns that total.
   */
  writeEnd(event: HarnessEvent & { type: 'turnEnd' }, costBeforeUsd: number): number {
    const costUsd = roundUsd(Math.max(0, event.costUsd));
    const totalCostUsd = roundUsd(costBeforeUsd + costUsd);
    this.#deps.write({
      type: 'turn',
      outcome: event.outcome,
      costUsd,
      totalCostUsd,
      ...(event.usage ? { usage: event.usage } : {}),
    });
    return totalCostUsd;
  }

  /**
   * The turn ended: its open tool calls are forgotten. Returns true when it left the user a question (asked one
   * explicitly, or its last text ends with a question mark).
   */
  end(): boolean {
    this.#openTools.clear();
    const asked = this.#asked || endsWithQuestion(this.#lastText);
    this.#asked = false;
    return asked;
  }
}

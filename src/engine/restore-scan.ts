// What restore needs to know about one session, found by visiting its log records newest-first and stopping as soon
// as it knows: the turn cut off by a crash (turn_start without turn_end), the messages accepted but never started,
// the last user activity, and the accepted message ids the SQLite index has not seen yet.
import type { LogRecord } from '../store/jsonl-log.ts';
import type { TurnStep } from './history.ts';
import type { EngineLogRecord, EngineTurnOutcome, IncomingEntry } from './log-records.ts';
import { asEngineRecord } from './log-records.ts';

/** A queued message as restore found it. */
export interface FoundIncoming extends IncomingEntry {
  seq: number;
  ts: number;
}

/** An `outgoing` record of an open turn. */
export interface SentRecord {
  seq: number;
  text: string;
  target: string;
}

/** The state of one session's log. */
export interface RestoreState {
  /** Sequence number and time of the last record. */
  lastSeq: number;
  updatedAt: number;
  /**
   * The turn that started and never ended, with what it recorded; `sent` lists its `outgoing` records with their seq
   * (the idempotency key of their delivery), oldest first.
   */
  openTurn: { messageId: string; incoming: FoundIncoming | null; steps: TurnStep[]; sent: SentRecord[] } | null;
  /** Messages accepted and never started, oldest first. */
  pending: FoundIncoming[];
  /** Outcome of the last closed turn. */
  lastOutcome: EngineTurnOutcome | null;
  /** Time of the last message from a person, if the scan saw one. */
  lastUserAt: number | null;
  /** Accepted message ids with seq above the index's `indexedSeq`, oldest first. */
  unindexed: { messageId: string; seq: number }[];
}

type Phase = 'find-turn' | 'find-incoming' | 'done';

/** Every `incoming` record's line holds these bytes (its type). */
const INCOMING = Buffer.from('incoming');

/** Visits records newest-first (see HistoryCollector for the same protocol): `visit` until false, then `state`. */
export class RestoreScanner {
  #indexedSeq: number;
  #phase: Phase = 'find-turn';
  #lastStarted: string | null = null;
  #steps: TurnStep[] = [];
  #sent: SentRecord[] = [];
  #open = false;
  #state: RestoreState = {
    lastSeq: 0,
    updatedAt: 0,
    openTurn: null,
    pending: [],
    lastOutcome: null,
    lastUserAt: null,
    unindexed: [],
  };

  /** `indexedSeq`: records up to this seq are already in the index (0 = index everything). */
  constructor(indexedSeq: number) {
    this.#indexedSeq = indexedSeq;
  }

  visit(record: EngineLogRecord): boolean {
    const s = this.#state;
    if (s.lastSeq === 0) {
      s.lastSeq = record.seq;
      s.updatedAt = record.ts;
    }
    if (record.type === 'incoming') {
      if (record.seq > this.#indexedSeq) s.unindexed.unshift({ messageId: record.messageId, seq: record.seq });
      if (record.kind === 'user' && s.lastUserAt === null) s.lastUserAt = record.ts;
      const { v: _v, ...found } = record;
      if (this.#phase !== 'done') {
        if (record.messageId === this.#lastStarted) {
          if (this.#open && s.openTurn) s.openTurn.incoming = found;
          this.#phase = 'done';
        } else {
          s.pending.unshift(found);
        }
      }
    } else if (this.#phase === 'find-turn') {
      if (record.type === 'turn_end') {
        s.lastOutcome = record.outcome;
        this.#lastStarted = record.messageId;
        this.#phase = 'find-incoming';
      } else if (record.type === 'turn_start') {
        this.#lastStarted = record.messageId;
        this.#open = true;
        s.openTurn = { messageId: record.messageId, incoming: null, steps: this.#steps, sent: this.#sent };
        this.#phase = 'find-incoming';
      } else if (record.type === 'assistant' || record.type === 'tool_result' || record.type === 'outgoing') {
        const { v: _v, seq: _seq, ts: _ts, ...step } = record;
        this.#steps.unshift(step);
        if (record.type === 'outgoing')
          this.#sent.unshift({ seq: record.seq, text: record.text, target: record.target });
      }
    }
    return !(this.#phase === 'done' && record.seq <= this.#indexedSeq + 1);
  }

  /**
   * What a line must hold to matter, asked before it is parsed (see jsonl-scan's LineNeedle). Once the turn state is
   * known and the whole log is being indexed (no index yet), only `incoming` records matter: lines without the word
   * "incoming" are passed over unparsed. With an index the scan stops near the indexed seq, which it learns from every
   * record, so every line is wanted.
   */
  needle(): Buffer | null {
    return this.#phase === 'done' && this.#indexedSeq === 0 ? INCOMING : null;
  }

  /**
   * Takes a raw record: once the turn state is known only `incoming` records still matter (their ids and times), so
   * the others are not validated. Returns false when the scan can stop.
   */
  visitRaw(raw: LogRecord): boolean {
    if (this.#phase === 'done' && raw.type !== 'incoming') return raw.seq > this.#indexedSeq + 1;
    const record = asEngineRecord(raw);
    return record ? this.visit(record) : true;
  }

  /** What the scan found. */
  get state(): RestoreState {
    return this.#state;
  }
}

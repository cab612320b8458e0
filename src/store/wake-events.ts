import type { DatabaseSync } from 'node:sqlite';

/** What happened to a coding session that the orchestrator is told about. */
export type WakeEventKind = 'waiting' | 'ended' | 'interrupted';

/** `pending` until delivered; `undelivered` when no session could take it (logged and counted). */
export type WakeEventStatus = 'pending' | 'delivered' | 'undelivered';

/** How a delivered event found its session. */
export type WakeVia = 'origin' | 'most-recent-foreground' | 'heartbeat' | 'heartbeat-run';

/** One wake event in the outbox. */
export interface WakeEvent {
  id: number;
  /** Idempotency id given to the engine; the same on every attempt. */
  messageId: string;
  codingSessionId: string;
  kind: WakeEventKind;
  status: WakeEventStatus;
  originSessionId: string | null;
  text: string;
  targetSessionId: string | null;
  via: WakeVia | null;
  attempts: number;
  error: string | null;
  createdAt: number;
  settledAt: number | null;
}

interface Row {
  id: number;
  message_id: string;
  coding_session_id: string;
  kind: string;
  status: string;
  origin_session_id: string | null;
  text: string;
  target_session_id: string | null;
  via: string | null;
  attempts: number;
  error: string | null;
  created_at: number;
  settled_at: number | null;
}

function fromRow(r: Row): WakeEvent {
  return {
    id: r.id,
    messageId: r.message_id,
    codingSessionId: r.coding_session_id,
    kind: r.kind as WakeEventKind,
    status: r.status as WakeEventStatus,
    originSessionId: r.origin_session_id,
    text: r.text,
    targetSessionId: r.target_session_id,
    via: r.via as WakeVia | null,
    attempts: r.attempts,
    error: r.error,
    createdAt: r.created_at,
    settledAt: r.settled_at,
  };
}

/** The durable outbox of wake events: written when the session signals, settled when the engine accepted it. */
export class WakeEventStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Stores a new pending event; returns it, or null when an event with this message id is already stored. */
  insert(input: { messageId: string; codingSessionId: string; kind: WakeEventKind; originSessionId: string | null; text: string; now: number }): WakeEvent | null {
    const result = this.#db
      .prepare(
        `INSERT OR IGNORE INTO wake_events (message_id, coding_session_id, kind, status, origin_session_id, text, created_at)
         VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
      )
      .run(input.messageId, input.codingSessionId, input.kind, input.originSessionId, input.text, input.now);
    return Number(result.changes) === 0 ? null : (this.get(Number(result.lastInsertRowid)) ?? null);
  }

  get(id: number): WakeEvent | undefined {
    const row = this.#db.prepare('SELECT * FROM wake_events WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The oldest pending event (events are delivered in the order they happened). */
  oldestPending(): WakeEvent | undefined {
    const row = this.#db.prepare("SELECT * FROM wake_events WHERE status = 'pending' ORDER BY id LIMIT 1").get() as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  markDelivered(id: number, targetSessionId: string, via: WakeVia, now: number): void {
    this.#db
      .prepare("UPDATE wake_events SET status = 'delivered', target_session_id = ?, via = ?, attempts = attempts + 1, error = NULL, settled_at = ? WHERE id = ?")
      .run(targetSessionId, via, now, id);
  }

  markUndelivered(id: number, reason: string, now: number): void {
    this.#db.prepare("UPDATE wake_events SET status = 'undelivered', attempts = attempts + 1, error = ?, settled_at = ? WHERE id = ?").run(reason, now, id);
  }

  /** A failed attempt: the event stays pending. */
  recordFailure(id: number, error: string): void {
    this.#db.prepare('UPDATE wake_events SET attempts = attempts + 1, error = ? WHERE id = ?').run(error, id);
  }

  /** Events by status, for the counters. */
  counts(): Record<WakeEventStatus, number> {
    const out: Record<WakeEventStatus, number> = { pending: 0, delivered: 0, undelivered: 0 };
    for (const r of this.#db.prepare('SELECT status, COUNT(*) AS n FROM wake_events GROUP BY status').all() as { status: WakeEventStatus; n: number }[]) out[r.status] = r.n;
    return out;
  }

  /** The newest events with a status, newest first. */
  recent(status: WakeEventStatus, limit = 10): WakeEvent[] {
    return (this.#db.prepare('SELECT * FROM wake_events WHERE status = ? ORDER BY id DESC LIMIT ?').all(status, limit) as unknown as Row[]).map(fromRow);
  }

  /** Deletes settled events beyond the newest `keep`. */
  trim(keep: number): void {
    this.#db
      .prepare(`DELETE FROM wake_events WHERE status != 'pending' AND id NOT IN (SELECT id FROM wake_events WHERE status != 'pending' ORDER BY id DESC LIMIT ?)`)
      .run(keep);
  }
}

// The SQLite index of the engine's sessions: where each session's log has been indexed up to, its last user activity,
// and the message ids it accepted. Everything here can be rebuilt from the logs (a missing row means "index from 0").
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { transaction } from './database.ts';

/** One indexed engine session. */
export interface EngineIndexRow {
  id: string;
  /** The stable key of its descriptor (same conversation → same key). */
  key: string;
  type: string;
  createdAt: number;
  updatedAt: number;
  lastUserAt: number | null;
  /** Every log record with a seq up to this one is reflected here (its message ids included). */
  indexedSeq: number;
}

/** A message id a session accepted, with the seq of its `incoming` record. */
export interface IndexedMessage {
  sessionId: string;
  messageId: string;
  seq: number;
}

interface Row {
  id: string;
  key: string;
  type: string;
  created_at: number;
  updated_at: number;
  last_user_at: number | null;
  indexed_seq: number;
}

/** Reads and writes the engine's index tables (migration 100). */
export class EngineIndex {
  #db: DatabaseSync;
  #hasMessage: StatementSync;
  #upsertSession: StatementSync;
  #insertMessage: StatementSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#hasMessage = db.prepare('SELECT 1 AS found FROM engine_message_ids WHERE session_id = ? AND message_id = ?');
    this.#upsertSession = db.prepare(`
      INSERT INTO engine_sessions (id, key, type, created_at, updated_at, last_user_at, indexed_seq)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT(id) DO UPDATE SET key = excluded.key, type = excluded.type, updated_at = excluded.updated_at,
        last_user_at = excluded.last_user_at, indexed_seq = excluded.indexed_seq`);
    this.#insertMessage = db.prepare('INSERT OR IGNORE INTO engine_message_ids (session_id, message_id, seq) VALUES (?, ?, ?)');
  }

  /** Every indexed session, by id. */
  all(): Map<string, EngineIndexRow> {
    const rows = this.#db.prepare('SELECT * FROM engine_sessions').all() as unknown as Row[];
    return new Map(
      rows.map((r) => [
        r.id,
        { id: r.id, key: r.key, type: r.type, createdAt: r.created_at, updatedAt: r.updated_at, lastUserAt: r.last_user_at, indexedSeq: r.indexed_seq },
      ]),
    );
  }

  /** True when `sessionId` has accepted `messageId` (as far as the index knows). */
  hasMessage(sessionId: string, messageId: string): boolean {
    return this.#hasMessage.get(sessionId, messageId) !== undefined;
  }

  /** Writes session rows and accepted message ids in one transaction (one fsync of the WAL). */
  apply(sessions: readonly EngineIndexRow[], messages: readonly IndexedMessage[]): void {
    if (sessions.length === 0 && messages.length === 0) return;
    transaction(this.#db, () => {
      for (const s of sessions) this.#upsertSession.run(s.id, s.key, s.type, s.createdAt, s.updatedAt, s.lastUserAt, s.indexedSeq);
      for (const m of messages) this.#insertMessage.run(m.sessionId, m.messageId, m.seq);
    });
  }

  /** Drops a session from the index (its log is gone or unusable). */
  forget(sessionId: string): void {
    transaction(this.#db, () => {
      this.#db.prepare('DELETE FROM engine_message_ids WHERE session_id = ?').run(sessionId);
      this.#db.prepare('DELETE FROM engine_sessions WHERE id = ?').run(sessionId);
    });
  }
}

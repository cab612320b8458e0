import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

/**
 * The announcements a restart owes: one row per coding session the restore marked interrupted, written in the same
 * transaction as the mark and deleted once the session's chat notice and orchestrator wake are stored (both keyed, so
 * announcing again after a crash in between stores nothing twice).
 */
export class RestartNoticeStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Runs `mark` (the session's interrupted update) and records the owed notice in one transaction. */
  markWithNotice(sessionId: string, now: number, mark: () => void): void {
    transaction(this.#db, () => {
      mark();
      this.#db.prepare('INSERT OR IGNORE INTO restart_notices (session_id, interrupted_at) VALUES (?, ?)').run(sessionId, now);
    });
  }

  /** Session ids whose notice is still owed, oldest first. */
  pending(): string[] {
    const rows = this.#db.prepare('SELECT session_id FROM restart_notices ORDER BY interrupted_at, session_id').all() as { session_id: string }[];
    return rows.map((r) => r.session_id);
  }

  /** Records that these sessions' notices are stored (in the outbox and the wake outbox). */
  done(sessionIds: readonly string[]): void {
    transaction(this.#db, () => {
      const remove = this.#db.prepare('DELETE FROM restart_notices WHERE session_id = ?');
      for (const id of sessionIds) remove.run(id);
    });
  }
}

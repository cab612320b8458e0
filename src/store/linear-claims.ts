// Durable idempotency of the Linear event router: claims (the first path to take a comment, a prompt or an issue
// event owns it; the others stand down) and assignments (the Issue webhook and the AppUserNotification of one
// assignment, paired so that only one of them dispatches).
import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

/** Which webhook reported an assignment. */
export type AssignmentSource = 'issue' | 'notification';

/** The outcome of recording an assignment event. */
export type AssignmentClaim =
  /** The first report of this assignment: dispatch it. */
  | { kind: 'new'; seq: number; agentSessionId: string | null }
  /** The same delivery again (after a crash or retry): carry on with what it started. */
  | { kind: 'redelivery'; seq: number; agentSessionId: string | null; paired: boolean }
  /** The other webhook already reported this assignment: nothing to do. */
  | { kind: 'paired'; seq: number; pairedWith: number };

interface AssignmentRow {
  seq: number;
  issue_id: string;
  source: string;
  delivery_id: string;
  paired_with: number | null;
  agent_session_id: string | null;
  created_at: number;
}

/** Claims and assignment pairs, in the daemon's database (migration 460). */
export class LinearClaimStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Claims `key` for `owner`. Returns true when the key is now (or already was) this owner's; false when another owner
   * holds it. The same owner claiming again (a redelivery) gets true.
   */
  claim(key: string, owner: string, now: number): boolean {
    this.#db.prepare('INSERT OR IGNORE INTO linear_claims (key, owner, created_at) VALUES (?, ?, ?)').run(key, owner, now);
    return this.owner(key) === owner;
  }

  /** Who holds `key`, or null. */
  owner(key: string): string | null {
    const row = this.#db.prepare('SELECT owner FROM linear_claims WHERE key = ?').get(key) as { owner: string } | undefined;
    return row?.owner ?? null;
  }

  /** Gives a claim up (its work could not be taken over). */
  release(key: string, owner: string): void {
    this.#db.prepare('DELETE FROM linear_claims WHERE key = ? AND owner = ?').run(key, owner);
  }

  /**
   * Records that `source` reported the assignment of `issueId` to the app (delivery `deliveryId`). Within `windowMs`
   * of an unpaired report from the other source, the two are one assignment (`paired`). All in one transaction.
   */
  recordAssignment(input: { issueId: string; source: AssignmentSource; deliveryId: string; now: number; windowMs: number }): AssignmentClaim {
    return transaction(this.#db, () => {
      const same = this.#db.prepare('SELECT * FROM linear_assignments WHERE delivery_id = ?').get(input.deliveryId) as AssignmentRow | undefined;
      if (same) return { kind: 'redelivery', seq: same.seq, agentSessionId: same.agent_session_id, paired: same.paired_with !== null };
      const other = this.#db
        .prepare(
          `SELECT a.* FROM linear_assignments a
           WHERE a.issue_id = ? AND a.source <> ? AND a.created_at >= ? AND a.paired_with IS NULL
             AND NOT EXISTS (SELECT 1 FROM linear_assignments b WHERE b.paired_with = a.seq)
           ORDER BY a.seq DESC LIMIT 1`,
        )
        .get(input.issueId, input.source, input.now - input.windowMs) as AssignmentRow | undefined;
      const inserted = this.#db
        .prepare('INSERT INTO linear_assignments (issue_id, source, delivery_id, paired_with, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(input.issueId, input.source, input.deliveryId, other?.seq ?? null, input.now);
      const seq = Number(inserted.lastInsertRowid);
      if (other) return { kind: 'paired', seq, pairedWith: other.seq };
      return { kind: 'new', seq, agentSessionId: null };
    });
  }

  /** Remembers the agent session created for an assignment (a redelivery reuses it). */
  setAssignmentSession(seq: number, agentSessionId: string): void {
    this.#db.prepare('UPDATE linear_assignments SET agent_session_id = ? WHERE seq = ?').run(agentSessionId, seq);
  }

  /** Deletes claims and assignments older than `before`; returns how many rows went. */
  prune(before: number): number {
    const a = this.#db.prepare('DELETE FROM linear_claims WHERE created_at < ?').run(before).changes;
    const b = this.#db.prepare('DELETE FROM linear_assignments WHERE created_at < ?').run(before).changes;
    return Number(a) + Number(b);
  }
}

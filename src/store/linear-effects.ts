// The durable ledger of effects on Linear (activities, comments, issue updates): one row per effect key, claimed
// before the effect is sent and marked done after, so a crash at any line neither loses the fact that it may have
// been sent nor sends it a second time unknowingly.
import type { DatabaseSync } from 'node:sqlite';

/**
 * What the ledger knew of a key when it was claimed. `new`: nobody claimed it before (send it). `pending`: claimed by
 * an earlier attempt that did not confirm it (it may or may not have reached Linear). `done`: sent and confirmed.
 */
export type EffectClaim = 'new' | 'pending' | 'done';

/** The effect ledger in the daemon's database (migration 402). */
export class LinearEffectStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Claims `key` (one autocommitted statement, durable before the caller sends anything); returns what was there. */
  claim(key: string, now: number): EffectClaim {
    const inserted = this.#db
      .prepare("INSERT INTO linear_effects (key, state, created_at, updated_at) VALUES (?, 'pending', ?, ?) ON CONFLICT(key) DO NOTHING")
      .run(key, now, now);
    if (Number(inserted.changes) === 1) return 'new';
    const row = this.#db.prepare('SELECT state FROM linear_effects WHERE key = ?').get(key) as { state: string } | undefined;
    return row?.state === 'done' ? 'done' : 'pending';
  }

  /** Marks a claimed effect as sent. */
  markDone(key: string, now: number): void {
    this.#db.prepare("UPDATE linear_effects SET state = 'done', updated_at = ? WHERE key = ?").run(now, key);
  }

  /** Drops a pending claim (its effect was refused before anything happened: it may be sent afresh). */
  release(key: string): void {
    this.#db.prepare("DELETE FROM linear_effects WHERE key = ? AND state = 'pending'").run(key);
  }

  /** The state of a key, or null when it was never claimed. */
  state(key: string): 'pending' | 'done' | null {
    const row = this.#db.prepare('SELECT state FROM linear_effects WHERE key = ?').get(key) as { state: string } | undefined;
    if (!row) return null;
    return row.state === 'done' ? 'done' : 'pending';
  }

  /** Deletes entries last touched before `before`; returns how many. */
  prune(before: number): number {
    return Number(this.#db.prepare('DELETE FROM linear_effects WHERE updated_at < ?').run(before).changes);
  }
}

// The durable ledger of effects on Linear (activities, comments, issue updates): one row per effect key, claimed
// before the effect is sent and marked done after, so a crash at any line neither loses the fact that it may have
// been sent nor sends it a second time unknowingly.
import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/**
 * What the ledger knew of a key when it was claimed. `new`: nobody claimed it before (send it). `pending`: claimed by
 * an earlier attempt that did not confirm it (it may or may not have reached Linear). `done`: sent and confirmed.
 */
export type EffectClaim = 'new' | 'pending' | 'done';

/** The effect ledger in the daemon's database (migration 402). */
export class LinearEffectStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Claims `key` (one statement, committed (with its turn's write group) before it resolves, so before anything is sent); resolves what was there. */
  async claim(key: string, now: number): Promise<EffectClaim> {
    const inserted = await this.#db
      .insertInto('linear_effects')
      .values({ key, state: 'pending', created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return 'new';
    return (await this.state(key)) === 'done' ? 'done' : 'pending';
  }

  /** Marks a claimed effect as sent. */
  async markDone(key: string, now: number): Promise<void> {
    await this.#db
      .updateTable('linear_effects')
      .set({ state: 'done', updated_at: now })
      .where('key', '=', key)
      .execute();
  }

  /** Drops a pending claim (its effect was refused before anything happened: it may be sent afresh). */
  async release(key: string): Promise<void> {
    await this.#db.deleteFrom('linear_effects').where('key', '=', key).where('state', '=', 'pending').execute();
  }

  /** The state of a key, or null when it was never claimed. */
  async state(key: string): Promise<'pending' | 'done' | null> {
    const row = await this.#db.selectFrom('linear_effects').select('state').where('key', '=', key).executeTakeFirst();
    if (!row) return null;
    return row.state === 'done' ? 'done' : 'pending';
  }

  /** Deletes entries last touched before `before`; resolves how many. */
  async prune(before: number): Promise<number> {
    const result = await this.#db.deleteFrom('linear_effects').where('updated_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

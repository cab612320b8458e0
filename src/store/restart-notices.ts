import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/**
 * The announcements a restart owes: one row per coding session the restore marked interrupted, written in the same
 * transaction as the mark and deleted once the session's chat notice and orchestrator wake are stored (both keyed, so
 * announcing again after a crash in between stores nothing twice).
 */
export class RestartNoticeStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Runs `mark` (the session's interrupted update, given the transaction to write in) and records the owed notice in
   * one transaction; resolves once both committed. A `mark` that returns false (a compare-and-swap another node won)
   * records no notice.
   */
  async markWithNotice(
    sessionId: string,
    now: number,
    mark: (trx: Kysely<Database>) => Promise<void | boolean>,
  ): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      if ((await mark(trx)) === false) return;
      await trx
        .insertInto('restart_notices')
        .values({ session_id: sessionId, interrupted_at: now })
        .onConflict((oc) => oc.column('session_id').doNothing())
        .execute();
    });
  }

  /** Session ids whose notice is still owed, oldest first. */
  async pending(): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('restart_notices')
      .select('session_id')
      .orderBy('interrupted_at')
      .orderBy('session_id')
      .execute();
    return rows.map((r) => r.session_id);
  }

  /** Records that these sessions' notices are stored (in the outbox and the wake outbox). */
  async done(sessionIds: readonly string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    await this.#db.deleteFrom('restart_notices').where('session_id', 'in', sessionIds).execute();
  }
}

import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/** The tables of scheduled runs posted to the engine (cron and heartbeat): one lifecycle, the same columns. */
export type RunTable = 'cron_runs' | 'heartbeat_runs';

/** How the engine took a posted run: the session it went to, and whether it had that message already. */
export interface PostedOutcome {
  sessionId: string;
  duplicate: boolean;
  now: number;
}

/** Counts one more attempt at posting run `id` of `table` (found unfinished after a restart). */
export async function countRunAttempt(db: Kysely<Database>, table: RunTable, id: number): Promise<void> {
  await db
    .updateTable(table)
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

/** Records run `id` of `table` as accepted by the engine (within the caller's transaction `db`). */
export async function markRunPosted(
  db: Kysely<Database>,
  table: RunTable,
  id: number,
  outcome: PostedOutcome,
): Promise<void> {
  await db
    .updateTable(table)
    .set({
      status: 'posted',
      session_id: outcome.sessionId,
      duplicate: outcome.duplicate ? 1 : 0,
      finished_at: outcome.now,
      error: null,
    })
    .where('id', '=', id)
    .execute();
}

/** Records run `id` of `table` as refused (`failed`) or given up after a crash (`abandoned`). */
export async function markRunEnded(
  db: Kysely<Database>,
  table: RunTable,
  id: number,
  status: 'failed' | 'abandoned',
  error: string,
  now: number,
): Promise<void> {
  await db.updateTable(table).set({ status, error, finished_at: now }).where('id', '=', id).execute();
}

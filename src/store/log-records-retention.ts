// Retention of `log_records` (the write-through of the logs, cluster-migrations.ts 840): a coding session's records live
// as long as its log file does, i.e. as long as its session is kept (`maxPersistedSessions`: the evicting node removes
// the file and queues the removal of its records; that removal is lost when the node dies before its mirror commits).
// This deletes the records of session logs whose session is no longer stored, in bounded batches. The engine's logs are
// never removed (the engine keeps every session), so their records are kept: they are what a new holder rebuilds from.
import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/** How much one pass may delete. */
export interface RecordPruneLimits {
  /** Only logs whose newest record is older than this (epoch ms): a session row written just after its first records is never taken for gone. */
  before: number;
  /** At most this many logs per pass. */
  maxLogs: number;
  /** Rows deleted per statement (each statement is its own short transaction). */
  batchRows: number;
}

/** What a pass deleted. */
export interface RecordPruneResult {
  logs: number;
  records: number;
}

/**
 * Deletes the records of up to `maxLogs` session logs that no `coding_sessions` row names and whose newest record is
 * older than `before`, `batchRows` rows per statement. Resolves with what it deleted; a pass that hit `maxLogs` may
 * leave more for the next one. Safe to run on any node and to repeat (a crash between batches leaves a smaller orphan).
 */
export async function pruneSessionRecords(db: Kysely<Database>, limits: RecordPruneLimits): Promise<RecordPruneResult> {
  const orphans = await db
    .selectFrom('log_records as r')
    .select('r.log')
    .where('r.kind', '=', 'session')
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('coding_sessions as c').select('c.id').whereRef('c.id', '=', 'r.log'))),
    )
    .groupBy('r.log')
    .having((eb) => eb.fn.max('r.ts'), '<', limits.before)
    .orderBy('r.log')
    .limit(limits.maxLogs)
    .execute();
  let records = 0;
  for (const { log } of orphans) {
    for (;;) {
      const deleted = await db
        .deleteFrom('log_records')
        .where('kind', '=', 'session')
        .where('log', '=', log)
        .where('seq', 'in', (eb) =>
          eb
            .selectFrom('log_records')
            .select('seq')
            .where('kind', '=', 'session')
            .where('log', '=', log)
            .orderBy('seq')
            .limit(limits.batchRows),
        )
        .executeTakeFirst();
      const count = Number(deleted.numDeletedRows);
      records += count;
      if (count < limits.batchRows) break;
    }
  }
  return { logs: orphans.length, records };
}

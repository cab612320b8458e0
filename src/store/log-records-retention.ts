// Retention of `log_records` (the write-through of the logs, cluster-migrations.ts 840): a coding session's records live
// as long as its log file does, i.e. as long as its session is kept (`maxPersistedSessions`: the evicting node removes
// the file and queues the removal of its records; that removal is lost when the node dies before its mirror commits).
// This deletes the records of session logs whose session is no longer stored, in bounded batches. The engine's logs are
// never removed (the engine keeps every session), so their records are kept: they are what a new holder rebuilds from.
// The search never groups the table: it walks the distinct session logs in name order through the primary key
// (`kind, log, seq`), one index probe per log (a recursive query, at most `maxScan` logs per statement), and checks
// each log against `coding_sessions` and for a record at or after `before` with probes of the same keys. No other
// index is needed, so the hot write path of the records pays for none.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from './tables/index.ts';

/** How much one pass may delete. */
export interface RecordPruneLimits {
  /** Only logs whose newest record is older than this (epoch ms): a session row written just after its first records is never taken for gone. */
  before: number;
  /** At most this many logs per pass. */
  maxLogs: number;
  /** Rows deleted per statement (each statement is its own short transaction). */
  batchRows: number;
  /** Session logs looked at per pass (default 1000): each is an index probe or three. */
  maxScan?: number;
  /** Where the pass starts: after this log (the `next` of the pass before), or from the first log (null, absent). */
  after?: string | null;
}

/** What a pass deleted. */
export interface RecordPruneResult {
  logs: number;
  records: number;
}

/** What one pass deleted, and where the next one starts. */
export interface RecordPrunePass extends RecordPruneResult {
  /** The `after` of the next pass; null when this one reached the last session log. */
  next: string | null;
}

/** One session log of a walk, and whether it is an orphan old enough to prune. */
interface WalkedLog {
  log: string;
  orphan: number;
}

/**
 * Up to `maxScan` distinct session logs after `after`, in name order, each flagged as an orphan when no
 * `coding_sessions` row names it and none of its records is at or after `before`. One statement: a recursive walk of
 * the primary key (each step takes the next log name with `ORDER BY log LIMIT 1`), on both databases.
 */
async function walkSessionLogs(
  db: Kysely<Database>,
  after: string,
  maxScan: number,
  before: number,
): Promise<WalkedLog[]> {
  const { rows } = await sql<WalkedLog>`WITH RECURSIVE walk(log, n) AS (
      SELECT (SELECT r.log FROM log_records r WHERE r.kind = 'session' AND r.log > ${after} ORDER BY r.log LIMIT 1), 1
      UNION ALL
      SELECT (SELECT r.log FROM log_records r WHERE r.kind = 'session' AND r.log > w.log ORDER BY r.log LIMIT 1), w.n + 1
      FROM walk w WHERE w.log IS NOT NULL AND w.n < ${maxScan}
    )
    SELECT w.log AS log,
      CASE WHEN EXISTS (SELECT 1 FROM coding_sessions c WHERE c.id = w.log)
        OR EXISTS (SELECT 1 FROM log_records r WHERE r.kind = 'session' AND r.log = w.log AND r.ts >= ${before})
      THEN 0 ELSE 1 END AS orphan
    FROM walk w WHERE w.log IS NOT NULL ORDER BY w.log`.execute(db);
  return rows.map((row) => ({ log: row.log, orphan: Number(row.orphan) }));
}

/**
 * Deletes the records of up to `maxLogs` session logs that no `coding_sessions` row names and whose newest record is
 * older than `before`, `batchRows` rows per statement, looking at up to `maxScan` logs after `after`. Resolves with what
 * it deleted and where the next pass starts (`next`; null once the walk reached the last log). Safe to run on any node
 * and to repeat (a crash between batches leaves a smaller orphan).
 */
export async function pruneSessionRecords(db: Kysely<Database>, limits: RecordPruneLimits): Promise<RecordPrunePass> {
  const maxScan = Math.max(1, limits.maxScan ?? 1000);
  const walked = await walkSessionLogs(db, limits.after ?? '', maxScan, limits.before);
  const orphans: { log: string }[] = [];
  let looked = 0;
  for (; looked < walked.length && orphans.length < limits.maxLogs; looked += 1) {
    const row = walked[looked];
    if (row?.orphan === 1) orphans.push({ log: row.log });
  }
  const reachedEnd = looked === walked.length && walked.length < maxScan;
  const next = reachedEnd ? null : (walked[looked - 1]?.log ?? null);
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
  return { logs: orphans.length, records, next };
}

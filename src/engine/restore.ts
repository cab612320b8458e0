// Loading engine sessions from their logs on start: the descriptor from each log's first record (never re-derived),
// then a newest-first scan that stops once it knows the session's state (restore-scan.ts). The engine then queues the
// pending messages again and closes the cut-off turns.
import type { Logger } from '../core/logger.ts';
import type { EngineIndex, EngineIndexRow } from '../store/engine-index.ts';
import type { EngineLogs } from '../store/engine-logs.ts';
import { parseDescriptor } from './descriptor.ts';
import type { RestoreState } from './restore-scan.ts';
import { RestoreScanner } from './restore-scan.ts';
import { EngineSession } from './session.ts';

/** A session read back from disk with what its log says is unfinished. */
export interface LoadedSession {
  session: EngineSession;
  state: RestoreState;
}

/** Figures of one load, for the log line and the benchmark. */
export interface LoadReport {
  files: number;
  skipped: number;
  records: number;
  malformed: number;
}

function scan(
  logs: EngineLogs,
  id: string,
  indexedSeq: number,
): { state: RestoreState; records: number; malformed: number } {
  const scanner = new RestoreScanner(indexedSeq);
  const report = logs.scanBackward(
    id,
    (raw) => scanner.visitRaw(raw),
    () => scanner.needle(),
  );
  return { state: scanner.state, records: report.visited, malformed: report.malformed };
}

/**
 * Reads every engine log once. A log whose first record is not a `session_created` with a valid descriptor is skipped
 * and logged. Index rows of logs that are gone are dropped. Two logs with the same descriptor key keep the most
 * recently active one (logged). Returns the sessions and the load figures.
 */
export async function loadSessions(
  logs: EngineLogs,
  index: EngineIndex,
  logger: Logger,
): Promise<{ loaded: LoadedSession[]; report: LoadReport }> {
  const rows = await index.all();
  const report: LoadReport = { files: 0, skipped: 0, records: 0, malformed: 0 };
  const byKey = new Map<string, LoadedSession>();
  const seen = new Set<string>();
  for (const id of logs.list()) {
    report.files += 1;
    seen.add(id);
    const first = logs.readFirst(id);
    const descriptor = first?.type === 'session_created' ? parseDescriptor(first.descriptor) : null;
    if (!first || !descriptor) {
      report.skipped += 1;
      logger.warn(
        { session: id, path: logs.path(id) },
        'engine log skipped: its first record is not a session_created with a valid descriptor',
      );
      continue;
    }
    let row: EngineIndexRow | undefined = rows.get(id);
    let result = scan(logs, id, row?.indexedSeq ?? 0);
    if (row && result.state.lastSeq < row.indexedSeq) {
      logger.warn(
        { session: id, indexedSeq: row.indexedSeq, lastSeq: result.state.lastSeq },
        'engine index ahead of its log: reindexing the session from its log',
      );
      await index.forget(id);
      row = undefined;
      result = scan(logs, id, 0);
    }
    report.records += result.records;
    report.malformed += result.malformed;
    const { state } = result;
    const session = new EngineSession({
      id,
      descriptor,
      createdAt: first.ts,
      updatedAt: state.updatedAt || first.ts,
      lastUserAt: state.lastUserAt ?? row?.lastUserAt ?? null,
      lastOutcome: state.lastOutcome,
    });
    session.durableSeq = state.lastSeq;
    session.indexedSeq = row?.indexedSeq ?? 0;
    session.unindexed = state.unindexed;
    for (const m of state.unindexed) session.recentIds.add(m.messageId);
    const other = byKey.get(session.key);
    if (other) {
      const keep = other.session.updatedAt >= session.updatedAt ? other : { session, state };
      const drop = keep === other ? session : other.session;
      logger.warn(
        { key: session.key, kept: keep.session.id, ignored: drop.id },
        'two engine logs share one session key; the older one is ignored',
      );
      byKey.set(session.key, keep);
      continue;
    }
    byKey.set(session.key, { session, state });
  }
  for (const id of rows.keys()) if (!seen.has(id)) await index.forget(id);
  return { loaded: [...byKey.values()], report };
}

// The coding sessions of a node: their logs (written through to the database on PostgreSQL), the ApprovalDesk that
// decides their permission requests, the harnesses, the reader of records of sessions on other nodes, and the
// SessionManager over all of them.
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { ApprovalDesk } from '../approvals/desk.ts';
import type { ClusterRecords } from '../cluster/cluster-records.ts';
import type { ClusterRecordReader } from '../cluster/record-reader.ts';
import type { Harness } from '../coding/harness.ts';
import { createHarnesses } from '../coding/harnesses.ts';
import { SessionManager } from '../coding/session-manager.ts';
import { workspaceRoot } from '../coding/workspace.ts';
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import { HARNESS_NAMES } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { CodingSessionStore } from '../store/coding-sessions.ts';
import { RestartNoticeStore } from '../store/restart-notices.ts';
import { SessionLogs } from '../store/session-logs.ts';
import type { Database } from '../store/tables/index.ts';
import { recordReader } from './cluster-postgres.ts';
import type { Shutdown } from './shutdown.ts';

/** The coding sessions' parts (see the top). */
export interface CodingSessions {
  logs: SessionLogs;
  approvals: ApprovalDesk;
  /** The harnesses this node has, which it tells the cluster. */
  harnessNames: HarnessName[];
  /** Reads sessions on other nodes from the database (PostgreSQL); null on SQLite. */
  reader: ClusterRecordReader | null;
  sessions: SessionManager;
}

/**
 * Builds the coding sessions' parts over `home`'s logs and the database; `harnesses` replaces the real ones (tests).
 * `serving` is false while the cluster has this node down (a stall, until it rejoined): a launch reaching it is refused.
 * Nothing is started or restored.
 */
export function buildCodingSessions(deps: {
  config: Config;
  home: string;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  records: ClusterRecords | null;
  harnesses: Record<HarnessName, Harness> | undefined;
  serving: () => boolean;
  shutdown: Shutdown;
}): CodingSessions {
  const { config, db, clock, logger, records, shutdown } = deps;
  const logs = new SessionLogs(join(deps.home, 'logs'), {
    ...(records ? { mirror: records.mirror, database: records.store } : {}),
    fsyncBatchMs: config.timings.fsyncBatchMs,
    now: () => clock.now(),
    onRepair: (sessionId, report) =>
      logger.warn({ session: sessionId, ...report }, 'repaired the torn end of a session log'),
  });
  // Approvals: every permission request of a coding session is stored and decided once (rules, people, timeout).
  const approvals = new ApprovalDesk({
    db,
    clock,
    logger: logger.child({ component: 'approvals' }),
    config: config.approvals,
    rootOf: (workdir) => workspaceRoot(workdir, config.workspaces),
  });
  shutdown.add('approvals', () => approvals.stop());
  const harnesses = deps.harnesses ?? createHarnesses(config, logger);
  const harnessNames = HARNESS_NAMES.filter((h) => h in harnesses);
  // Output, --follow and the SSE stream of a session on another node read its records from the database.
  const reader = recordReader({
    records,
    logs,
    isLocal: (id) => sessions.liveById(id) !== undefined,
    clock,
    logger,
    shutdown,
  });
  const sessions: SessionManager = new SessionManager({
    config,
    permissions: approvals,
    clock,
    logger: logger.child({ component: 'sessions' }),
    store: new CodingSessionStore(db),
    logs,
    ...(reader ? { records: reader } : {}),
    harnesses,
    notices: new RestartNoticeStore(db),
    serving: deps.serving,
  });
  return { logs, approvals, harnessNames, reader, sessions };
}

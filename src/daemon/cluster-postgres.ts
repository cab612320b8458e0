// What a node adds when the cluster shares one PostgreSQL database (none of it is built on SQLite, a cluster of one):
// the `primary` lease's write fence, the write-through of log records with the node's LISTEN connection, the reader of
// other nodes' session records, the engine routed through `engine_calls`, and the wake-ups of other nodes' webhook
// workers.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { ClusterRecords } from '../cluster/cluster-records.ts';
import { ClusterRecordReader } from '../cluster/record-reader.ts';
import type { WakeableWorker } from '../cluster/webhook-wakeups.ts';
import { WebhookWakeups } from '../cluster/webhook-wakeups.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineControl } from '../engine/api.ts';
import { RoutedEngine } from '../engine/routed-engine.ts';
import { announceWebhooks } from '../gateway/webhook-announce.ts';
import type { WriteFence } from '../store/cluster-fence.ts';
import { fenceIdleMs, leaseFence } from '../store/cluster-fence.ts';
import { EngineCallStore } from '../store/engine-calls.ts';
import type { OpenedStore } from '../store/open-store.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { Database } from '../store/tables/index.ts';
import type { Shutdown } from './shutdown.ts';

/**
 * The `primary` lease's fence: the primary holder's engine records and outbox claims commit only while this run holds
 * the lease (store/cluster-fence.ts; used on PostgreSQL only). `incarnation` reads the node's current one (fresh after
 * a rejoin) at each check; the server ends a fenced transaction left idle past half the node timeout.
 */
export function primaryFence(config: Config, incarnation: () => string): WriteFence {
  return leaseFence({
    name: 'primary',
    node: config.node.name,
    incarnation,
    lock: true,
    idleTimeoutMs: fenceIdleMs(config.cluster.nodeTimeoutSec),
  });
}

/**
 * On PostgreSQL: every log record written through to the database (read from any node; the engine's logs rebuilt from
 * it on takeover) and the node's LISTEN connection, closed after the logs' writers stopped. Null on SQLite.
 */
export async function openNodeRecords(deps: {
  store: Pick<OpenedStore, 'db' | 'dialect'>;
  config: Config;
  clock: Clock;
  logger: Logger;
  fence: WriteFence;
  shutdown: Shutdown;
}): Promise<ClusterRecords | null> {
  const { store, config } = deps;
  if (store.dialect !== 'postgres' || !config.store.url) return null;
  // pg (the LISTEN connection) is loaded only on PostgreSQL.
  const { openClusterRecords } = await import('../cluster/cluster-records.ts');
  const records = await openClusterRecords({
    url: config.store.url,
    db: store.db,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'cluster' }),
    retryMs: 1000,
    engineFence: deps.fence,
  });
  deps.shutdown.add('cluster-records', () => records.close());
  return records;
}

/**
 * Where output, --follow and the SSE stream read a session's records: from the database for a session on another node
 * (`isLocal` false), from `logs` for this node's; null without `records` (SQLite: everything is local).
 */
export function recordReader(deps: {
  records: ClusterRecords | null;
  logs: SessionLogs;
  isLocal: (sessionId: string) => boolean;
  clock: Clock;
  logger: Logger;
  shutdown: Shutdown;
}): ClusterRecordReader | null {
  const { records } = deps;
  const reader = records
    ? new ClusterRecordReader({
        logs: deps.logs,
        isLocal: deps.isLocal,
        database: records,
        clock: deps.clock,
        logger: deps.logger.child({ component: 'cluster' }),
        pollMs: 2000,
      })
    : null;
  if (reader) deps.shutdown.add('record-reader', () => reader.close());
  return reader;
}

/** The engine as the node's callers reach it, and the store of the calls other nodes make to it. */
export interface RoutedEngineParts {
  /** The engine on the primary's holder; elsewhere its calls go through `engine_calls`. The local engine on SQLite. */
  engine: EngineControl;
  /** The `engine_calls` store (PostgreSQL), run by the holder's EngineCallWorker; null on SQLite. */
  calls: EngineCallStore | null;
}

/** Routes `engine` (see RoutedEngineParts); `servesEngine` is true while this node runs the engine. */
export function routeEngine(deps: {
  records: ClusterRecords | null;
  db: Kysely<Database>;
  engine: EngineControl;
  servesEngine: () => boolean;
  clock: Clock;
}): RoutedEngineParts {
  const { records } = deps;
  const calls = records ? new EngineCallStore(deps.db, { notify: true }) : null;
  const engine = calls
    ? new RoutedEngine({
        local: deps.engine,
        servesEngine: deps.servesEngine,
        calls,
        notices: records?.listener ?? null,
        clock: deps.clock,
        pollMs: 1000,
        timeoutMs: 30_000,
      })
    : deps.engine;
  return { engine, calls };
}

/**
 * On PostgreSQL: a webhook delivery committed by `app` is announced, and wakes the worker of the node holding its lease
 * (`workers` are this node's). Started here; stopped at the daemon's stop. Nothing on SQLite.
 */
export function shareWebhooks(deps: {
  app: FastifyInstance;
  records: ClusterRecords | null;
  db: Kysely<Database>;
  workers: { linear?: WakeableWorker; github?: WakeableWorker };
  clock: Clock;
  logger: Logger;
  heartbeatMs: number;
  shutdown: Shutdown;
}): void {
  const { records } = deps;
  if (!records) return;
  const wakeups = new WebhookWakeups({
    db: deps.db,
    notices: records.listener,
    workers: deps.workers,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'cluster' }),
    pollMs: deps.heartbeatMs,
  });
  announceWebhooks(deps.app, (source) => wakeups.announce(source));
  wakeups.start();
  deps.shutdown.add('webhook-wakeups', async () => wakeups.stop());
}

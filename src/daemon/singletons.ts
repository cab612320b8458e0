// What runs on one node of the cluster at a time, served under leases: the `primary` group (outbox deliveries, the
// engine with its rebuild and the engine calls of other nodes, the scheduler, the wake deliveries, Linear, the chat
// connectors' receiving, the poll, and on PostgreSQL the retention of log records) and `github`. The daemon's stop stops
// each member at its own step (see shutdown.ts); the node's stop then gives the leases up.
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { DurableOutbox } from '../channels/outbox.ts';
import type { ClusterRecords } from '../cluster/cluster-records.ts';
import { rebuildEngineLogs } from '../cluster/engine-rebuild.ts';
import { addPrimaryMembers } from '../cluster/primary.ts';
import { RecordRetention } from '../cluster/record-retention.ts';
import { ServiceGroup } from '../cluster/service-group.ts';
import type { Singletons } from '../cluster/singletons.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import { EngineCallWorker } from '../engine/routed-engine.ts';
import type { Database } from '../store/tables/index.ts';
import type { ConnectorMember } from './chat.ts';
import type { Integrations } from './integrations.ts';
import type { Orchestrator } from './orchestrator.ts';
import type { Shutdown } from './shutdown.ts';

/** The `primary` group, empty: restartable, so a node that lost it (a rejoin) serves it again later. */
export function primaryGroup(logger: Logger): ServiceGroup {
  return new ServiceGroup({ logger: logger.child({ component: 'cluster' }), restartable: true });
}

/**
 * Adds the members of `primary` in their start order and registers it, and `github` when enabled, with the node's
 * `singletons`; registers each member's stop at its step. `holder` reads the node's current incarnation (the engine
 * calls' claims). Nothing starts here: the node's first pass starts what it takes.
 */
export function registerSingletons(deps: {
  primary: ServiceGroup;
  singletons: Pick<Singletons, 'add'>;
  holder: () => string;
  home: string;
  db: Kysely<Database>;
  config: Config;
  clock: Clock;
  logger: Logger;
  heartbeatMs: number;
  records: ClusterRecords | null;
  outbox: DurableOutbox;
  /** The chat connectors served as members (startChatConnectors). */
  connectors: readonly ConnectorMember[];
  orchestrator: Pick<Orchestrator, 'engine' | 'engineCalls' | 'scheduler' | 'wake'>;
  integrations: Integrations;
  shutdown: Shutdown;
}): void {
  const { primary, records, clock, logger, shutdown } = deps;
  const { engine, engineCalls, scheduler, wake } = deps.orchestrator;
  const { linear, github } = deps.integrations;
  shutdown.add('outbox', () => primary.stopMember('outbox'));
  shutdown.add('engine', () => primary.stopMember('engine'));
  shutdown.add('scheduler', () => primary.stopMember('scheduler'));
  // After the wake router's own stop was registered: the deliveries stop first, then the router.
  shutdown.add('wake', () => primary.stopMember('wake'));
  // Stopped before the sessions: the pipeline leaves its running sessions to the SessionManager.
  if (linear) shutdown.add('linear', () => primary.stopMember('linear'));
  addPrimaryMembers(primary, {
    outbox: deps.outbox,
    engine,
    rebuildEngine: records
      ? async () => {
          // Served again after losing the lease (a rejoin): the engine's write-through, refused for good meanwhile,
          // takes the new run's records (the logs are rebuilt from the table first).
          records.engineMirror.unfence();
          const rebuilt = await rebuildEngineLogs(records.store, join(deps.home, 'engine'));
          logger.info(rebuilt, 'engine logs rebuilt from the database before the engine starts on this node');
        }
      : null,
    scheduler,
    wake,
    linear,
    connectors: deps.connectors,
    engineCalls: engineCalls
      ? new EngineCallWorker({
          engine,
          calls: engineCalls,
          notices: records?.listener ?? null,
          holder: deps.holder,
          clock,
          logger: logger.child({ component: 'cluster' }),
          pollMs: 1000,
        })
      : null,
    listener: records?.listener ?? null,
    clock,
    logger: logger.child({ component: 'cluster' }),
    pollMs: deps.heartbeatMs,
  });
  shutdown.add('primary-poll', () => primary.stopMember('poll'));
  shutdown.add('engine-calls', () => primary.stopMember('engine-calls'));
  if (records) {
    // log_records retention: the primary's holder deletes the records of session logs whose session is gone.
    primary.add(
      'record-retention',
      new RecordRetention({
        db: deps.db,
        clock,
        logger: logger.child({ component: 'cluster' }),
        intervalMs: deps.config.timings.cleanupIntervalMs,
        graceMs: deps.config.timings.cleanupMaxAgeMs,
      }),
    );
    shutdown.add('record-retention', () => primary.stopMember('record-retention'));
  }
  deps.singletons.add('primary', primary);
  if (github) {
    const githubWorkers = new ServiceGroup({ logger: logger.child({ component: 'cluster' }), restartable: true });
    shutdown.add('github', () => githubWorkers.stopMember('github'));
    githubWorkers.add('github', github);
    deps.singletons.add('github', githubWorkers);
  }
}

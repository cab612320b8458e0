// The orchestrator of a node: inference, the engine (with its late-bound toolbox) as the node's callers reach it, the
// scheduler (cron and heartbeat), the wake router (coding-session events → orchestrator) and the `code_run` runner.
import type { Kysely } from 'kysely';
import type { Outbox } from '../channels/connector.ts';
import type { ClusterRecords } from '../cluster/cluster-records.ts';
import type { CodeRunCluster } from '../coding/code-runner.ts';
import { CodeRunner } from '../coding/code-runner.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineControl } from '../engine/api.ts';
import { createEngine } from '../engine/create.ts';
import type { Engine } from '../engine/engine.ts';
import type { LateToolbox } from '../engine/late-toolbox.ts';
import { lateToolbox } from '../engine/late-toolbox.ts';
import type { Scheduler } from '../engine/scheduler/scheduler.ts';
import { createScheduler } from '../engine/scheduler/scheduler.ts';
import type { WakeRouter } from '../engine/wake/wake-router.ts';
import { createWakeRouter } from '../engine/wake/wake-router.ts';
import { createInference } from '../inference/inference.ts';
import type { Inference } from '../inference/types.ts';
import type { EngineCallStore } from '../store/engine-calls.ts';
import type { Database } from '../store/tables/index.ts';
import { routeEngine } from './cluster-postgres.ts';
import type { CodingSessions } from './coding-sessions.ts';
import type { Shutdown } from './shutdown.ts';

/** The orchestrator's parts (see the top). */
export interface Orchestrator {
  inference: Inference;
  /** The engine's toolbox, bound once the operations' services are whole. */
  tools: LateToolbox;
  /** The engine of this node (run where `primary` is held). */
  engine: Engine;
  /** The `engine_calls` other nodes make (PostgreSQL), or null. */
  engineCalls: EngineCallStore | null;
  /** The engine as the node's callers reach it: this node's, or through `engine_calls` where another node runs it. */
  routedEngine: EngineControl;
  scheduler: Scheduler;
  wake: WakeRouter;
  codeRunner: CodeRunner;
}

/**
 * Builds the orchestrator's parts; `inference` replaces the one built from `config.inference` (tests). `servesEngine`
 * is true while this node runs the engine; `codeRunPlacement` places a `code_run` that names no placement (set once
 * the operations' services are whole, in a cluster). Nothing is started.
 */
export function buildOrchestrator(deps: {
  config: Config;
  env: NodeJS.ProcessEnv;
  home: string;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  records: ClusterRecords | null;
  inference: Inference | undefined;
  outbox: Outbox;
  coding: Pick<CodingSessions, 'sessions' | 'logs'>;
  servesEngine: () => boolean;
  codeRunPlacement: () => CodeRunCluster | undefined;
  shutdown: Shutdown;
}): Orchestrator {
  const { config, db, clock, logger, records } = deps;
  const { sessions, logs } = deps.coding;
  const inference = deps.inference ?? createInference(config.inference, logger, { env: deps.env });
  // The engine's tools act on the engine: it is built with a late-bound toolbox, bound once the services are whole.
  const tools = lateToolbox();
  const engine = createEngine({
    config,
    clock,
    logger,
    db,
    home: deps.home,
    inference,
    outbox: deps.outbox,
    toolbox: tools,
    ...(records ? { mirror: records.engineMirror } : {}),
  });
  // Cluster (PostgreSQL): the engine runs on the primary's holder; elsewhere its calls go through `engine_calls`.
  const { engine: routedEngine, calls: engineCalls } = routeEngine({
    records,
    db,
    engine,
    servesEngine: deps.servesEngine,
    clock,
  });
  const scheduler = createScheduler({ db, engine: routedEngine, clock, logger, config });
  const wake = createWakeRouter({
    db,
    sessions,
    engine: routedEngine,
    heartbeat: scheduler.heartbeat,
    clock,
    logger,
    config,
  });
  deps.shutdown.add('wake', () => wake.stop());
  // code_run (one coding turn with a watchdog) for the orchestrator, with or without Linear. In a cluster a run that
  // names no placement (a Linear mention's answer) is placed like the code_run operation's.
  const codeRunner = new CodeRunner({
    config,
    sessions,
    logs,
    clock,
    logger: logger.child({ component: 'code-run' }),
    cluster: deps.codeRunPlacement,
  });
  return { inference, tools, engine, engineCalls, routedEngine, scheduler, wake, codeRunner };
}

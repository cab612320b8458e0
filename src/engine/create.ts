// The engine's factory for the composition root: builds its log store and index and hands everything to Engine.
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Outbox } from '../channels/connector.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Inference } from '../inference/types.ts';
import { EngineIndex } from '../store/engine-index.ts';
import { EngineLogs } from '../store/engine-logs.ts';
import type { RecordMirror } from '../store/log-records.ts';
import type { Database } from '../store/tables/index.ts';
import { Engine } from './engine.ts';
import type { AgentToolbox } from './toolbox.ts';
import { emptyToolbox } from './toolbox.ts';

export interface CreateEngineDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  /** The daemon's database (engine migrations 100–199 applied), e.g. `sqliteKysely(openDatabase(…))`. */
  db: Kysely<Database>;
  /** The state directory; logs go to `<home>/engine/`. */
  home: string;
  inference: Inference;
  outbox: Outbox;
  /** The sessions' tools (operations/toolbox.ts createOperationsToolbox); default none. */
  toolbox?: AgentToolbox;
  /** On PostgreSQL: the write-through of the engine's log records to the database (see store/log-records.ts). */
  mirror?: RecordMirror;
}

/** Builds the engine over `<home>/engine/` and the database; call `start()` to restore and run it, `stop()` to end. */
export function createEngine(deps: CreateEngineDeps): Engine {
  const { config, clock, logger } = deps;
  const logs = new EngineLogs(join(deps.home, 'engine'), {
    fsyncBatchMs: config.timings.fsyncBatchMs,
    now: () => clock.now(),
    maxOpenLogs: config.engine.maxOpenLogs,
    onRepair: (session, report) => logger.warn({ session, ...report }, 'engine log had a torn tail; cut it off'),
    onError: (session, error) => logger.error({ session, err: errorMessage(error) }, 'closing an engine log failed'),
    ...(deps.mirror ? { mirror: deps.mirror } : {}),
  });
  return new Engine({
    config,
    clock,
    logger: logger.child({ component: 'engine' }),
    logs,
    index: new EngineIndex(deps.db),
    inference: deps.inference,
    outbox: deps.outbox,
    toolbox: deps.toolbox ?? emptyToolbox,
  });
}

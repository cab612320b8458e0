// The scheduler as the daemon builds it (src/daemon/orchestrator.ts): cron tasks and the heartbeat over one database and the engine.
import type { Kysely } from 'kysely';
import type { Config } from '../../core/config.ts';
import { CronTaskStore } from '../../store/cron-tasks.ts';
import { HeartbeatStore } from '../../store/heartbeat-store.ts';
import type { Database } from '../../store/tables/index.ts';
import { CronScheduler } from './cron-scheduler.ts';
import type { HeartbeatStatus } from './heartbeat.ts';
import { Heartbeat } from './heartbeat.ts';
import type { SchedulerBaseDeps } from './scheduled-run.ts';

export interface SchedulerDeps extends SchedulerBaseDeps {
  /** The daemon's database (migrations 300–399 applied; `sqliteKysely(db)` on SQLite). */
  db: Kysely<Database>;
  config: Pick<Config, 'scheduler' | 'heartbeat'>;
}

/** Cron and heartbeat figures for `scheduler_status`. */
export interface SchedulerStatus {
  missedRuns: Config['scheduler']['missedRuns'];
  cron: { tasks: number; enabled: number; nextRunAt: number | null };
  heartbeat: HeartbeatStatus;
}

export interface Scheduler {
  readonly cron: CronScheduler;
  readonly heartbeat: Heartbeat;
  /** Recovers unrecorded runs, applies the missed-run policy, arms the timers. */
  start(): Promise<void>;
  /** Stops the timers and waits for posts in flight (call before the engine stops). */
  stop(): Promise<void>;
  status(): Promise<SchedulerStatus>;
}

/** Builds the cron scheduler and the heartbeat over `deps.db`; nothing runs until `start()`. */
export function createScheduler(deps: SchedulerDeps): Scheduler {
  const logger = deps.logger.child({ part: 'scheduler' });
  const cron = new CronScheduler({
    store: new CronTaskStore(deps.db),
    engine: deps.engine,
    clock: deps.clock,
    logger,
    config: deps.config,
  });
  const heartbeat = new Heartbeat({
    store: new HeartbeatStore(deps.db),
    engine: deps.engine,
    clock: deps.clock,
    logger,
    config: deps.config,
  });
  return {
    cron,
    heartbeat,
    async start() {
      await cron.start();
      await heartbeat.start();
    },
    async stop() {
      await Promise.all([cron.stop(), heartbeat.stop()]);
    },
    async status() {
      const tasks = await cron.list();
      const next = tasks.filter((t) => t.enabled && t.nextRunAt !== null).map((t) => t.nextRunAt as number);
      return {
        missedRuns: deps.config.scheduler.missedRuns,
        cron: {
          tasks: tasks.length,
          enabled: tasks.filter((t) => t.enabled).length,
          nextRunAt: next.length > 0 ? Math.min(...next) : null,
        },
        heartbeat: await heartbeat.status(),
      };
    },
  };
}

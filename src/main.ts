import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from './core/clock.ts';
import { systemClock } from './core/clock.ts';
import type { Config, HarnessName } from './core/config.ts';
import { loadConfig } from './core/config-load.ts';
import type { LoadOptions } from './core/config-load.ts';
import { createLogger } from './core/logger.ts';
import type { Logger } from './core/logger.ts';
import type { Harness } from './coding/harness.ts';
import { createHarnesses } from './coding/harnesses.ts';
import { SessionManager } from './coding/session-manager.ts';
import { buildGateway } from './gateway/server.ts';
import type { OperationServices } from './operations/operation.ts';
import { OPERATIONS } from './operations/table.ts';
import { CodingSessionStore } from './store/coding-sessions.ts';
import { acquireDaemonLock, releaseDaemonLock, updateDaemonInfo } from './store/daemon-lock.ts';
import { openDatabase } from './store/database.ts';
import { SessionLogs } from './store/session-logs.ts';
import { ensureToken } from './store/tokens.ts';
import { VERSION } from './version.ts';

export interface DaemonOptions extends LoadOptions {
  /** Where log lines go (default stdout). */
  logDestination?: NodeJS.WritableStream;
  /** Replaces the real harnesses (tests). */
  harnesses?: Record<HarnessName, Harness>;
  clock?: Clock;
}

/** A running daemon. */
export interface Daemon {
  url: string;
  port: number;
  home: string;
  token: string;
  config: Config;
  logger: Logger;
  services: OperationServices;
  /** Stops everything in reverse order of start; running sessions are marked interrupted. */
  stop(): Promise<void>;
}

/**
 * The composition root: reads the config, claims the state directory, opens the store, builds every service,
 * marks sessions cut off by the last shutdown as interrupted, and starts the gateway. Returns a handle to stop it.
 */
export async function startDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  const { config, home } = loadConfig(options);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const startedAt = Date.now();
  acquireDaemonLock(home, { pid: process.pid, startedAt, version: VERSION });
  const logger = createLogger({ level: config.log.level, ...(options.logDestination ? { destination: options.logDestination } : {}) });
  const stops: (() => Promise<void> | void)[] = [() => releaseDaemonLock(home)];
  const stop = async (): Promise<void> => {
    for (const fn of stops.reverse()) {
      try {
        await fn();
      } catch (error) {
        logger.error({ err: error }, 'error while stopping');
      }
    }
  };
  try {
    const clock = options.clock ?? systemClock();
    const db = openDatabase(join(home, 'state.db'));
    stops.push(() => db.close());
    const logs = new SessionLogs(join(home, 'logs'), {
      fsyncBatchMs: config.timings.fsyncBatchMs,
      now: () => clock.now(),
      onRepair: (sessionId, report) => logger.warn({ session: sessionId, ...report }, 'repaired the torn end of a session log'),
    });
    const store = new CodingSessionStore(db);
    const sessions = new SessionManager({
      config,
      clock,
      logger: logger.child({ component: 'sessions' }),
      store,
      logs,
      harnesses: options.harnesses ?? createHarnesses(config, logger),
    });
    sessions.restore();
    sessions.startTimers();
    stops.push(() => sessions.stop());
    const services: OperationServices = { config, sessions };
    const token = ensureToken(home);
    const app = await buildGateway({ config, logger, token, ops: OPERATIONS, services, logs, version: VERSION, startedAt });
    await app.listen({ host: config.gateway.host, port: config.gateway.port });
    stops.push(() => app.close());
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.gateway.port;
    const host = config.gateway.host.includes(':') ? `[${config.gateway.host}]` : config.gateway.host;
    const url = `http://${host}:${port}`;
    updateDaemonInfo(home, { pid: process.pid, startedAt, version: VERSION, url, port });
    logger.info({ url, home, version: VERSION }, 'switchboard daemon started');
    return { url, port, home, token, config, logger, services, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

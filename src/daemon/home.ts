// The first step of a start: the config read, the state directory made owner-only and locked for this process, and the
// logger. Nothing else is opened yet.
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { LoadOptions } from '../core/config-load.ts';
import { loadConfig } from '../core/config-load.ts';
import type { Logger } from '../core/logger.ts';
import { createLogger } from '../core/logger.ts';
import { acquireDaemonLock } from '../store/daemon-lock.ts';
import { secureHome } from '../store/home-permissions.ts';
import { VERSION } from '../version.ts';

/** How the home is claimed: where the config comes from, where log lines go, and the clock (tests). */
export interface HomeOptions extends LoadOptions {
  logDestination?: NodeJS.WritableStream;
  clock?: Clock;
}

/** A claimed home: the config, the state directory, the environment, the clock, the start time and the logger. */
export interface ClaimedHome {
  config: Config;
  home: string;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  startedAt: number;
  logger: Logger;
}

/**
 * Loads the config, makes the home owner-only (logging what it changed), takes the daemon lock and builds the logger.
 * Throws when the config is invalid or another daemon holds the lock. The caller releases the lock when it stops.
 */
export function claimHome(options: HomeOptions): ClaimedHome {
  const { config, home } = loadConfig(options);
  const env = options.env ?? process.env;
  // Session prompts and output, tokens and the database live here: owner-only, even in a home the user made first.
  const tightened = secureHome(home);
  const clock = options.clock ?? systemClock();
  const startedAt = clock.now();
  acquireDaemonLock(home, { pid: process.pid, startedAt, version: VERSION });
  const logger = createLogger({
    level: config.log.level,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  if (tightened.length > 0) {
    logger.info(
      { home, count: tightened.length, paths: tightened.slice(0, 20) },
      `made the state directory owner-only: ${tightened.length} path(s) set to 0700 (folders) / 0600 (files)`,
    );
  }
  return { config, home, env, clock, startedAt, logger };
}

// Bolt's and @slack/socket-mode's log lines through the daemon's logger. Their debug lines (request bodies, the Socket
// Mode URL with its ticket) are dropped; their errors are reported as warnings, since the connector logs the failures
// that matter itself (a reconnecting WebSocket is not an error of the daemon).
import { inspect } from 'node:util';
import type { AppOptions } from '@slack/bolt';
import { LogLevel } from '@slack/bolt';
import type { Logger } from '../../core/logger.ts';

/** The logger interface Bolt takes. */
export type BoltLogger = NonNullable<AppOptions['logger']>;

function line(parts: unknown[]): string {
  return parts
    .map((p) => (p instanceof Error ? p.message : typeof p === 'string' ? p : inspect(p, { depth: 2 })))
    .join(' ');
}

/** Wraps `logger` for Bolt: info as debug, warn and error as warn, debug dropped. */
export function boltLogger(logger: Logger): BoltLogger {
  return {
    debug: () => {},
    info: (...parts: unknown[]) => logger.debug({ slack: line(parts) }, 'slack library'),
    warn: (...parts: unknown[]) => logger.warn({ slack: line(parts) }, 'slack library warning'),
    error: (...parts: unknown[]) => logger.warn({ slack: line(parts) }, 'slack library error'),
    setLevel: () => {},
    getLevel: () => LogLevel.INFO,
    setName: () => {},
  };
}

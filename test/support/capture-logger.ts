import { Writable } from 'node:stream';
import type { Logger } from '../../src/core/logger.ts';
import { createLogger } from '../../src/core/logger.ts';

/** One parsed log line. */
export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** pino level numbers by name. */
export const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** A real pino logger (with the daemon's redaction) whose lines are kept, parsed, in `lines`. */
export function captureLogger(level = 'debug'): {
  logger: Logger;
  lines: LogLine[];
  find(level: keyof typeof LEVELS, msg: RegExp): LogLine[];
} {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const logger = createLogger({ level, destination });
  return { logger, lines, find: (lvl, msg) => lines.filter((l) => l.level === LEVELS[lvl] && msg.test(l.msg)) };
}

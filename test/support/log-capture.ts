// A pino logger whose lines are kept in memory (parsed), for tests that assert what was logged.
import { Writable } from 'node:stream';
import type { Logger } from '../../src/core/logger.ts';
import { createLogger } from '../../src/core/logger.ts';

/** One logged line, parsed. */
export type LogLine = Record<string, unknown> & { level: number; msg?: string };

/** Builds the daemon's logger (same redaction) writing into memory; `lines()` returns what was logged so far. */
export function captureLogger(level = 'debug'): { logger: Logger; lines: () => LogLine[]; raw: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const logger = createLogger({ level, destination });
  const raw = (): string => chunks.join('');
  const lines = (): LogLine[] =>
    raw()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine);
  return { logger, lines, raw };
}

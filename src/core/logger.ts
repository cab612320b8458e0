import type { Logger } from 'pino';
import { pino } from 'pino';

export type { Logger } from 'pino';

/** Paths whose values never reach a log line. */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'apiKey',
  '*.apiKey',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.headers.authorization',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'accessToken',
  '*.accessToken',
  'refreshToken',
  '*.refreshToken',
  'env',
  '*.env',
  'botToken',
  '*.botToken',
  'clientSecret',
  '*.clientSecret',
  'webhookSecret',
  '*.webhookSecret',
  'channels.telegram.botToken',
  'linear.apiKey',
  'linear.clientSecret',
  'linear.webhookSecret',
  'inference.providers[*].apiKey',
];

export interface LoggerOptions {
  level: string;
  /** Where lines go; default stdout. Tests pass a stream to capture them. */
  destination?: NodeJS.WritableStream;
}

/** Builds the daemon's pino logger with secret redaction. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { app: 'switchboard' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? process.stdout,
  );
}

/** A logger that discards everything; for tests and one-shot CLI commands. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

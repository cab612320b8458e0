import type { Clock } from '../core/clock.ts';

/** What the CLI and its commands need from their surroundings. */
export interface CliIo {
  /** Writes one line of output (stdout). */
  out: (text: string) => void;
  /** Writes one line of diagnostics (stderr). */
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Where the command was typed (relative paths resolve against it); default `process.cwd()`. */
  cwd?: string;
  /** The CLI's clock; default the system clock with timers that hold the process open. */
  clock?: Clock;
}

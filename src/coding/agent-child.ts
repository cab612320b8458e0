// What an agent process looks like to the harnesses: a child process's stdio, pid, exit and kill, whether it was
// spawned here (node:child_process) or by the spawn broker (spawn-broker.ts).
import type { Readable, Writable } from 'node:stream';

/** A running (or starting) agent process. */
export interface AgentChild {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Known once the process has started. */
  readonly pid?: number | undefined;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly killed: boolean;
  /** The program spawned. */
  readonly spawnfile: string;
  kill(signal?: NodeJS.Signals): boolean;
  once(event: 'error', listener: (error: Error) => void): this;
  once(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

/** How an agent process is asked for: an argument array (never a shell), its directory, environment and stdin. */
export interface AgentSpawnRequest {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin: 'ignore' | 'pipe';
}

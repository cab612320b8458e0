import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { AgentChild, AgentSpawnRequest } from './agent-child.ts';
import { SpawnBroker } from './spawn-broker.ts';

/** Environment variable set on every agent process so a restarted daemon can find orphans of its sessions. */
export const SESSION_ENV_TAG = 'SWITCHBOARD_SESSION_ID';

export interface AgentProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** 'ignore' closes stdin (codex reads a piped stdin as extra prompt text). */
  stdin: 'ignore' | 'pipe';
  sessionId: string;
  /** Called with every stdout line, in order. */
  onLine: (line: string) => void;
  /** How the process is started (default: defaultSpawner()). */
  spawner?: AgentSpawner;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  spawnError?: string;
}

const STDERR_TAIL_BYTES = 4_096;

/** Starts an agent process. */
export type AgentSpawner = (request: AgentSpawnRequest) => AgentChild;

/** Spawns here, with node:child_process (blocks the event loop for a fork of this whole process). */
export const directSpawner: AgentSpawner = (request) =>
  spawn(request.command, request.args, { cwd: request.cwd, env: request.env, stdio: [request.stdin, 'pipe', 'pipe'] });

let sharedBroker: SpawnBroker | null = null;

/** Spawns through the process-wide spawn broker (spawn-broker.ts), started on first use. */
export const brokerSpawner: AgentSpawner = (request) => {
  sharedBroker ??= new SpawnBroker();
  return sharedBroker.spawn(request);
};

/**
 * The spawner agent processes use: in the daemon, unless SWITCHBOARD_SPAWN_BROKER=1 asks for the broker. Measured with
 * bench/launch-burst.ts on a 2-core machine, the broker kept the fork off the event loop but relaying every agent's
 * output over one IPC channel batched the work it causes, and /healthz waited longer (max 210–490 ms against 46–91 ms
 * spawning here, with launches one per loop turn); so it stays opt-in.
 */
export function defaultSpawner(env: NodeJS.ProcessEnv = process.env): AgentSpawner {
  return env.SWITCHBOARD_SPAWN_BROKER === '1' ? brokerSpawner : directSpawner;
}

/**
 * An agent CLI child process spawned with an argument array (never a shell), its stdout split into lines,
 * the tail of its stderr kept for error messages, and a stop that escalates SIGTERM → SIGKILL.
 */
export class AgentProcess {
  readonly child: AgentChild;
  /** Resolves once the process has exited and its stdout is fully read. */
  readonly exited: Promise<ExitInfo>;
  #stderr = '';
  #killTimer: NodeJS.Timeout | null = null;

  constructor(options: AgentProcessOptions) {
    this.child = (options.spawner ?? defaultSpawner())({
      command: options.command,
      args: options.args,
      cwd: options.cwd,
      env: { ...options.env, [SESSION_ENV_TAG]: options.sessionId },
      stdin: options.stdin,
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    const lines = this.child.stdout ? createInterface({ input: this.child.stdout, crlfDelay: Infinity }) : null;
    lines?.on('line', options.onLine);
    const stdoutDone = lines ? new Promise<void>((resolve) => lines.once('close', resolve)) : Promise.resolve();
    this.exited = new Promise<ExitInfo>((resolve) => {
      let settled = false;
      this.child.once('error', (error) => {
        if (settled) return;
        settled = true;
        lines?.close();
        resolve({ code: null, signal: null, spawnError: error.message });
      });
      this.child.once('close', (code, signal) => {
        if (settled) return;
        settled = true;
        void stdoutDone.then(() => resolve({ code, signal }));
      });
    }).finally(() => {
      if (this.#killTimer) clearTimeout(this.#killTimer);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last few KB the process wrote to stderr. */
  get stderrTail(): string {
    return this.#stderr.trim();
  }

  /** Sends SIGTERM now and SIGKILL after `graceMs` if the process is still alive. */
  stop(graceMs: number): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    if (this.#killTimer) return;
    this.#killTimer = setTimeout(() => {
      if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    }, graceMs);
    this.#killTimer.unref();
  }
}

/** Merges extra variables over the daemon's environment (the agent SDKs replace the environment instead). */
export function mergeEnv(...layers: (Record<string, string | undefined> | undefined)[]): Record<string, string | undefined> {
  return Object.assign({}, process.env, ...layers.filter(Boolean));
}

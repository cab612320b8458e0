import type { ChildProcess, StdioOptions } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Clock, Timer } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { GUARD_SUPPORTED, orphanGuard } from './orphan-guard.ts';

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
  /** Times the SIGKILL after a `stop` grace; default the system clock (unref'd: it never holds the daemon open). */
  clock?: Clock;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  spawnError?: string;
}

const STDERR_TAIL_BYTES = 4_096;

/**
 * An agent CLI child process spawned with an argument array (never a shell), its stdout split into lines,
 * the tail of its stderr kept for error messages, and a stop that escalates SIGTERM → SIGKILL. The agent leads its own
 * process group (it and the tools it runs are stopped together) and is watched by the orphan guard, which stops the
 * group if the daemon dies without stopping it.
 */
export class AgentProcess {
  readonly child: ChildProcess;
  /** Resolves once the process has exited and its stdout is fully read. */
  readonly exited: Promise<ExitInfo>;
  #stderr = '';
  #killTimer: Timer | null = null;
  #clock: Clock;

  constructor(options: AgentProcessOptions) {
    this.#clock = options.clock ?? systemClock();
    const stdio: StdioOptions = [options.stdin, 'pipe', 'pipe'];
    this.child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: { ...options.env, [SESSION_ENV_TAG]: options.sessionId },
      stdio,
      detached: GUARD_SUPPORTED,
    });
    const pid = this.child.pid;
    if (pid !== undefined) orphanGuard().watch(pid);
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
      this.#killTimer?.cancel();
      if (pid !== undefined) orphanGuard().unwatch(pid);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last few KB the process wrote to stderr. */
  get stderrTail(): string {
    return this.#stderr.trim();
  }

  /** Sends SIGTERM now and SIGKILL after `graceMs` if the process is still alive (to its process group where it has one). */
  stop(graceMs: number): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.#signal('SIGTERM');
    if (this.#killTimer) return;
    this.#killTimer = this.#clock.after(graceMs, () => {
      if (this.child.exitCode === null && this.child.signalCode === null) this.#signal('SIGKILL');
    });
  }

  /** Signals the agent's process group (the agent and its tools), else the agent alone. */
  #signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (GUARD_SUPPORTED && pid !== undefined) {
      try {
        process.kill(-pid, signal);
        return;
      } catch {
        // No such group (the agent already left it, or never led one): signal the process itself.
      }
    }
    this.child.kill(signal);
  }
}

/** Merges extra variables over the daemon's environment (the agent SDKs replace the environment instead). */
export function mergeEnv(
  ...layers: (Record<string, string | undefined> | undefined)[]
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const layer of layers) Object.assign(env, layer);
  return env;
}

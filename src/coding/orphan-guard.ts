import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const GUARD_MAIN = fileURLToPath(new URL('./orphan-guard-main.mjs', import.meta.url));

/** How long the guard lets agents answer SIGTERM before it sends SIGKILL, once the daemon is gone. */
export const GUARD_GRACE_MS = 2_000;

/** Whether agents can be guarded here: POSIX process groups (not Windows). */
export const GUARD_SUPPORTED = process.platform !== 'win32';

/** How often a guard that keeps dying is started again before guarding is given up (with a warning). */
const MAX_RESTARTS = 5;

/**
 * Makes agent processes end with the daemon, even when it is SIGKILLed. A small guard process (orphan-guard-main.mjs)
 * holds the read end of a pipe from the daemon and the list of agent process groups; when the daemon dies the pipe
 * closes and the guard stops those groups. Started on the first `watch`; restarted (and told every live agent again)
 * if it dies while the daemon runs. On Windows it does nothing.
 */
export class OrphanGuard {
  #child: ChildProcess | null = null;
  #pids = new Set<number>();
  #restarts = 0;
  #disabled = false;
  readonly #graceMs: number;

  constructor(graceMs = GUARD_GRACE_MS) {
    this.#graceMs = graceMs;
  }

  /** The guard process's pid, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Guards the process group led by `pid` (an agent spawned detached). */
  watch(pid: number): void {
    if (!GUARD_SUPPORTED) return;
    this.#pids.add(pid);
    this.#write(`+${pid}\n`);
  }

  /** The agent exited: nothing to stop for it any more. */
  unwatch(pid: number): void {
    if (!this.#pids.delete(pid)) return;
    this.#write(`-${pid}\n`);
  }

  /**
   * Ends the guard as a dying daemon would: it stops the agent groups still watched and exits. Resolves once it has.
   * (The daemon never needs this: its exit closes the pipe. Tests and embedders that stop early do.)
   */
  async close(): Promise<void> {
    const child = this.#child;
    this.#disabled = true;
    this.#child = null;
    this.#pids.clear();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin?.end();
    await exited;
  }

  #write(line: string): void {
    if (this.#disabled) return;
    const child = this.#child ?? this.#start();
    child.stdin?.write(line);
  }

  #start(): ChildProcess {
    // Its own process group, so whatever kills the daemon's group leaves the guard to clean up after it.
    const child = spawn(process.execPath, [GUARD_MAIN, String(this.#graceMs)], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    // Writes to a guard that died fail with EPIPE; its exit (below) starts a new one and tells it every live agent.
    child.stdin?.on('error', () => {});
    child.once('exit', (code, signal) => {
      if (this.#child !== child) return;
      this.#child = null;
      if (this.#pids.size === 0) return;
      this.#restarts += 1;
      if (this.#restarts > MAX_RESTARTS) {
        this.#disabled = true;
        process.emitWarning(
          `the orphan guard keeps dying (last: ${signal ?? `exit code ${code}`}); agent processes may outlive a daemon that is killed (the next start stops them)`,
        );
        return;
      }
      this.#write([...this.#pids].map((p) => `+${p}\n`).join(''));
    });
    child.once('error', (error) => {
      this.#disabled = true;
      process.emitWarning(
        `could not start the orphan guard: ${error.message}; agent processes may outlive a daemon that is killed (the next start stops them)`,
      );
    });
    // Never keeps the daemon (or a test) alive.
    child.unref();
    this.#child = child;
    return child;
  }
}

let shared: OrphanGuard | null = null;

/** The daemon's one guard, shared by every agent process it starts. */
export function orphanGuard(): OrphanGuard {
  shared ??= new OrphanGuard();
  return shared;
}

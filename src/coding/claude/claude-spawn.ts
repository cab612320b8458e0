import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { SpawnedProcess, SpawnOptions } from '@anthropic-ai/claude-agent-sdk';
import type { ExitInfo } from '../agent-process.ts';
import { AgentProcess } from '../agent-process.ts';
import { parseClaudeLine } from './claude-messages.ts';

export interface ClaudeSpawnerOptions {
  /** switchboard's session id, tagged on the child's environment (SESSION_ENV_TAG). */
  sessionId: string;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** A stdout line that is not JSON or fails its schema; it is dropped, not passed to the SDK. */
  onMalformed: (line: string, reason: string) => void;
  /** Every chunk the process writes to stderr. */
  onStderr?: (chunk: string) => void;
}

type ExitListener = (code: number | null, signal: NodeJS.Signals | null) => void;
type ErrorListener = (error: Error) => void;

/**
 * The `spawnClaudeCodeProcess` seam of the Agent SDK: spawns the CLI with an argument array (no shell), tags its
 * environment with the session id, and filters its stdout line by line through the zod schemas before the SDK sees it.
 * Keeps the pid, the stderr tail and the exit information for the harness, and stops the process SIGTERM → SIGKILL.
 */
export class ClaudeSpawner {
  #options: ClaudeSpawnerOptions;
  #proc: AgentProcess | null = null;
  #goodLines = 0;
  #badLines = 0;
  #exit: ExitInfo | null = null;
  #resolveExited!: (info: ExitInfo) => void;
  /** Resolves once the spawned process has exited and its output is drained (never, if nothing was spawned). */
  readonly exited: Promise<ExitInfo>;
  /** The program spawned (the script for JS entry points), for error messages. */
  command: string | undefined;

  constructor(options: ClaudeSpawnerOptions) {
    this.#options = options;
    this.exited = new Promise((resolve) => {
      this.#resolveExited = resolve;
    });
  }

  /** The SDK's `spawnClaudeCodeProcess` option; bound, so it can be passed as is. */
  readonly spawn = (spawnOptions: SpawnOptions): SpawnedProcess => this.#spawn(spawnOptions);

  get spawned(): boolean {
    return this.#proc !== null;
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  /** The last few KB of stderr. */
  get stderrTail(): string {
    return this.#proc?.stderrTail ?? '';
  }

  /** How many stdout lines passed the schemas / were dropped. */
  get lineCounts(): { good: number; malformed: number } {
    return { good: this.#goodLines, malformed: this.#badLines };
  }

  /** The exit of the process, once known. */
  get exitInfo(): ExitInfo | null {
    return this.#exit;
  }

  /** SIGTERM now, SIGKILL after the grace period; no-op when nothing runs. */
  stop(): void {
    this.#proc?.stop(this.#options.killGraceMs);
  }

  #spawn(spawnOptions: SpawnOptions): SpawnedProcess {
    if (this.#proc) throw new Error('this Claude Code run already spawned its process');
    // The SDK runs JS entry points with a bare `node`; use the Node running the daemon instead (PATH may hold an older one).
    const command = spawnOptions.command === 'node' ? process.execPath : spawnOptions.command;
    this.command =
      spawnOptions.command === 'node' ? (spawnOptions.args.find((a) => !a.startsWith('-')) ?? command) : command;
    const stdout = new PassThrough();
    const events = new EventEmitter();
    const proc = new AgentProcess({
      command,
      args: spawnOptions.args,
      cwd: spawnOptions.cwd ?? process.cwd(),
      env: spawnOptions.env,
      stdin: 'pipe',
      sessionId: this.#options.sessionId,
      onLine: (line) => this.#line(line, stdout),
    });
    this.#proc = proc;
    const onStderr = this.#options.onStderr;
    if (onStderr) proc.child.stderr?.on('data', (chunk: string) => onStderr(chunk));
    // The forwarded signal aborts only after the SDK's own stdin-EOF + grace path has run: then stop for good.
    const onAbort = (): void => proc.stop(this.#options.killGraceMs);
    if (spawnOptions.signal.aborted) onAbort();
    else spawnOptions.signal.addEventListener('abort', onAbort, { once: true });
    let exitCode: number | null = null;
    let signalCode: NodeJS.Signals | null = null;
    void proc.exited.then((info) => {
      spawnOptions.signal.removeEventListener('abort', onAbort);
      this.#exit = info;
      // Every good line is in the stream before the SDK hears of the exit, so a last `result` is never lost.
      stdout.end();
      if (info.spawnError) {
        events.emit('error', new Error(`could not start Claude Code (${command}): ${info.spawnError}`));
      } else {
        exitCode = info.code;
        signalCode = info.signal;
        events.emit('exit', info.code, info.signal);
      }
      this.#resolveExited(info);
    });
    const stdin = proc.child.stdin;
    if (!stdin) throw new Error('Claude Code was spawned without a stdin pipe');
    // Writes after the CLI died fail with EPIPE; the exit is reported through the exit event instead.
    stdin.on('error', () => {});
    const child = proc.child;
    const graceMs = this.#options.killGraceMs;
    const on = (event: 'exit' | 'error', listener: ExitListener | ErrorListener): void => {
      events.on(event, listener);
    };
    const once = (event: 'exit' | 'error', listener: ExitListener | ErrorListener): void => {
      events.once(event, listener);
    };
    const off = (event: 'exit' | 'error', listener: ExitListener | ErrorListener): void => {
      events.off(event, listener);
    };
    return {
      stdin,
      stdout,
      get killed() {
        return child.killed;
      },
      get exitCode() {
        return exitCode;
      },
      get signalCode() {
        return signalCode;
      },
      kill(signal: NodeJS.Signals): boolean {
        if (child.exitCode !== null || child.signalCode !== null) return false;
        // Any polite signal becomes SIGTERM with SIGKILL after the grace period.
        if (signal === 'SIGKILL') return child.kill('SIGKILL');
        proc.stop(graceMs);
        return true;
      },
      on,
      once,
      off,
    };
  }

  #line(line: string, stdout: PassThrough): void {
    if (!line.trim()) return;
    const parsed = parseClaudeLine(line);
    if (!parsed.ok) {
      this.#badLines += 1;
      this.#options.onMalformed(line, parsed.error);
      return;
    }
    this.#goodLines += 1;
    stdout.write(`${line}\n`);
  }
}

/** Builds a spawner for one run. */
export function createClaudeSpawner(options: ClaudeSpawnerOptions): ClaudeSpawner {
  return new ClaudeSpawner(options);
}

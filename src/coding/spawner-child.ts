import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { GUARD_SUPPORTED } from './orphan-guard.ts';
import type { AgentSockets, AgentSpawner, SpawnerLaunch, SpawnRequest } from './spawner.ts';
import { agentSpawner } from './spawner.ts';

/**
 * What callers see of an agent process, whoever spawned it: the ChildProcess the daemon spawned itself, or a
 * RemoteChild the spawner started. The fields are ChildProcess's, with its meaning.
 */
export interface AgentChild {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Undefined until the agent runs (a RemoteChild learns it from the spawner a little after its construction). */
  readonly pid?: number | undefined;
  readonly spawnfile: string;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly killed: boolean;
  kill(signal?: NodeJS.Signals): boolean;
}

/** The lifecycle of one agent: `spawn` when it runs, then either `error` (it never started) or `close`. */
export interface AgentChildEvents {
  spawn(pid: number): void;
  /** It could not be started; Node's message (`spawn <command> ENOENT`). */
  error(message: string): void;
  /** It exited and its stdout and stderr have ended. */
  close(code: number | null, signal: NodeJS.Signals | null): void;
}

/**
 * Spawns an agent (detached where process groups exist): through the spawner when there is one, else in this process.
 * A request the spawner cannot carry (a NUL byte anywhere) is spawned here, so Node's synchronous argument errors are
 * thrown from here as before. Events never fire before this returns, except `spawn` of an in-process child.
 */
export function spawnAgent(request: SpawnRequest, events: AgentChildEvents): AgentChild {
  const spawner = hasNul(request) ? null : agentSpawner();
  if (spawner) return new RemoteChild(spawner, request, events);
  const child = spawnHere(request);
  let settled = false;
  child.once('error', (error) => {
    if (settled) return;
    settled = true;
    events.error(error.message);
  });
  child.once('close', (code, signal) => {
    if (settled) return;
    settled = true;
    events.close(code, signal);
  });
  if (child.pid !== undefined) events.spawn(child.pid);
  return child;
}

function spawnHere(request: SpawnRequest): ChildProcess {
  return spawn(request.command, request.args, {
    cwd: request.cwd,
    env: request.env,
    stdio: [request.stdin, 'pipe', 'pipe'],
    detached: GUARD_SUPPORTED,
  });
}

function hasNul(request: SpawnRequest): boolean {
  const strings = [request.command, request.cwd, ...request.args, ...Object.entries(request.env).flat()];
  return strings.some((s) => typeof s === 'string' && s.includes('\0'));
}

/**
 * An agent the spawner started. Its stdio are stream stand-ins, usable at once: stdin is buffered until the agent runs,
 * stdout and stderr carry the daemon's sockets' data from when the spawner has reported the pid. If the spawner dies
 * before the agent was spawned it is spawned in this process instead; if it dies after, the exit status is lost and
 * reported as code null once the agent's output ends.
 */
class RemoteChild implements AgentChild {
  readonly stdin: PassThrough | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly spawnfile: string;
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  readonly #events: AgentChildEvents;
  readonly #launch: SpawnerLaunch;
  #local: ChildProcess | null = null;
  #orphaned = false;
  #pendingKill: NodeJS.Signals | null = null;
  #exited = false;
  #openStreams = 2;
  #done = false;
  #stdinTarget: Writable | null = null;

  constructor(spawner: AgentSpawner, request: SpawnRequest, events: AgentChildEvents) {
    this.spawnfile = request.command;
    this.stdin = request.stdin === 'pipe' ? new PassThrough() : null;
    this.#events = events;
    this.#launch = spawner.launch(request, {
      spawned: (pid, sockets) => this.#spawned(pid, sockets),
      failed: (message) => this.#fail(message),
      exited: (code, signal) => this.#exit(code, signal),
      lost: () => {
        if (this.pid === undefined) return this.#spawnHere(request);
        this.#orphaned = true;
        if (this.#openStreams === 0) this.#exit(null, null);
      },
    });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#exited || this.#done) return false;
    this.killed = true;
    const pid = this.pid;
    if (pid === undefined) {
      this.#pendingKill = signal;
      return true;
    }
    if (this.#local) return this.#local.kill(signal);
    if (!this.#orphaned) {
      this.#launch.kill(signal);
      return true;
    }
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  #spawned(pid: number, sockets: AgentSockets): void {
    sockets.stdin?.on('error', () => {
      // The agent closed its stdin or died (EPIPE): its exit is reported from the exit event.
    });
    this.#attach(pid, sockets.stdin, sockets.stdout, sockets.stderr);
  }

  /** The spawner lost the launch before spawning it: spawn it here, as the daemon did before there was a spawner. */
  #spawnHere(request: SpawnRequest): void {
    let child: ChildProcess;
    try {
      child = spawnHere(request);
    } catch (error) {
      this.#fail(error instanceof Error ? error.message : String(error));
      return;
    }
    this.#local = child;
    child.stdin?.on('error', () => {});
    child.once('error', (error) => {
      if (this.pid === undefined) this.#fail(error.message);
    });
    child.once('exit', (code, signal) => this.#exit(code, signal));
    const pid = child.pid;
    if (pid === undefined || !child.stdout || !child.stderr) return;
    this.#attach(pid, child.stdin, child.stdout, child.stderr);
  }

  #attach(pid: number, stdin: Writable | null, stdout: Readable, stderr: Readable): void {
    this.pid = pid;
    this.#stdinTarget = stdin;
    this.#events.spawn(pid);
    if (this.#pendingKill) this.#signalGroup(pid, this.#pendingKill);
    for (const [source, target] of [
      [stdout, this.stdout],
      [stderr, this.stderr],
    ] as const) {
      source.on('data', (chunk: Buffer) => target.write(chunk));
      source.on('error', () => source.destroy());
      source.once('close', () => {
        target.end();
        this.#openStreams -= 1;
        if (this.#orphaned && this.#openStreams === 0) this.#exit(null, null);
        this.#maybeClose();
      });
    }
    if (this.stdin && stdin) this.stdin.pipe(stdin);
  }

  #signalGroup(pid: number, signal: NodeJS.Signals): void {
    try {
      process.kill(GUARD_SUPPORTED ? -pid : pid, signal);
    } catch {
      this.kill(signal);
    }
  }

  #fail(message: string): void {
    if (this.#done) return;
    this.#done = true;
    this.stdin?.destroy();
    this.stdout.end();
    this.stderr.end();
    this.#events.error(message);
  }

  #exit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#exited) return;
    this.#exited = true;
    this.exitCode = code;
    this.signalCode = signal;
    // As a ChildProcess does: nothing more can be written to a process that exited.
    this.stdin?.destroy();
    if (!this.#orphaned) this.#stdinTarget?.destroy();
    this.#maybeClose();
  }

  #maybeClose(): void {
    if (!this.#exited || this.#openStreams > 0 || this.#done) return;
    this.#done = true;
    this.#events.close(this.exitCode, this.signalCode);
  }
}

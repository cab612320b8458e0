import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SPAWNER_MAIN = fileURLToPath(new URL('./spawner-main.mjs', import.meta.url));

/** How often a spawner that keeps dying is started again before agents are spawned in the daemon for good. */
const MAX_RESTARTS = 5;

/** What to spawn: an argument array (never a shell), with the agent's whole environment. */
export interface SpawnRequest {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin: 'ignore' | 'pipe';
}

/** The daemon's ends of a spawned agent's stdio: Unix sockets whose other ends are the agent's fds 0–2. */
export interface AgentSockets {
  stdin: Socket | null;
  stdout: Socket;
  stderr: Socket;
}

/** What the spawner reports about one launch; exactly one of `spawned`, `failed` or `lost` first. */
export interface LaunchHandlers {
  /** The agent runs as `pid` (leading its own process group) with these sockets as its stdio. */
  spawned(pid: number, sockets: AgentSockets): void;
  /** It could not be started: Node's message, as the daemon's own spawn would give it (`spawn x ENOENT`). */
  failed(message: string): void;
  /** The agent exited (only after `spawned`). */
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  /**
   * The spawner is gone: before `spawned` nothing was started (spawn it another way); after, the exit status is lost
   * (the agent's sockets still end when it does).
   */
  lost(): void;
}

/** A launch handed to the spawner. */
export interface SpawnerLaunch {
  /** Signals the agent itself through its parent (a no-op once it exited or before it was spawned). */
  kill(signal: NodeJS.Signals): void;
}

type SpawnerMessage =
  | { t: 'ready' }
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'error'; id: number; message: string }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

interface Launch {
  id: number;
  token: string;
  request: SpawnRequest;
  handlers: LaunchHandlers;
  sockets: Socket[];
  spawned: boolean;
}

/**
 * Spawns agent processes from a small helper process (spawner-main.mjs) instead of the daemon, so a burst of launches
 * does not fork the daemon's large memory on its event loop. The agent's stdio are Unix sockets the daemon connected:
 * its output reaches the daemon without a hop through the spawner. Started on the first launch, restarted on a later
 * one if it died (at most MAX_RESTARTS times); launches it loses before spawning are reported `lost` so the caller can
 * spawn them itself. POSIX only.
 */
export class AgentSpawner {
  #child: ChildProcess | null = null;
  #ready: Promise<boolean> | null = null;
  #dir: string | null = null;
  #launches = new Map<number, Launch>();
  #nextId = 1;
  #restarts = 0;
  #disabled = false;

  /** False once the spawner could not be started or kept dying: spawn in the daemon instead. */
  get available(): boolean {
    return !this.#disabled;
  }

  /** The spawner process's pid, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Hands `request` to the spawner; its outcome arrives through `handlers`, never synchronously. */
  launch(request: SpawnRequest, handlers: LaunchHandlers): SpawnerLaunch {
    const launch: Launch = { id: this.#nextId++, token: randomUUID(), request, handlers, sockets: [], spawned: false };
    this.#launches.set(launch.id, launch);
    this.#child?.channel?.ref();
    const ready = this.#ready ?? this.#start();
    void ready.then((ok) => (ok ? this.#send(launch) : this.#lose(launch)));
    return {
      kill: (signal) => {
        if (launch.spawned && this.#launches.has(launch.id)) this.#child?.send({ t: 'kill', id: launch.id, signal });
      },
    };
  }

  /** Lets the spawner go (tests): launches under way are lost; running agents live on. */
  async close(): Promise<void> {
    this.#disabled = true;
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    await exited;
  }

  #send(launch: Launch): void {
    const child = this.#child;
    if (!child?.connected || !this.#dir || !this.#launches.has(launch.id)) return this.#lose(launch);
    const { request } = launch;
    child.send({ t: 'spawn', id: launch.id, token: launch.token, ...request });
    const path = join(this.#dir, 'spawner.sock');
    const fds = request.stdin === 'pipe' ? [0, 1, 2] : [1, 2];
    for (const fd of fds) {
      const socket = connect(path);
      socket.write(`${launch.token} ${fd}\n`);
      // A socket that fails before the spawn loses the launch (the spawner is going); after, it just ends.
      socket.on('error', () => {
        socket.destroy();
        if (!launch.spawned) this.#forget(launch);
      });
      launch.sockets.push(socket);
    }
  }

  /** Gives up a launch the spawner may still hold: it closes what arrived; the caller spawns it another way. */
  #forget(launch: Launch): void {
    if (!this.#launches.has(launch.id)) return;
    this.#child?.send({ t: 'forget', token: launch.token }, (error) => void error);
    this.#lose(launch);
  }

  #lose(launch: Launch): void {
    if (!this.#launches.delete(launch.id)) return;
    if (!launch.spawned) for (const socket of launch.sockets) socket.destroy();
    this.#unrefIfIdle();
    launch.handlers.lost();
  }

  #unrefIfIdle(): void {
    if (this.#launches.size === 0) this.#child?.channel?.unref();
  }

  #message(message: SpawnerMessage): void {
    if (message.t === 'ready') return;
    const launch = this.#launches.get(message.id);
    if (!launch) return;
    switch (message.t) {
      case 'spawned': {
        launch.spawned = true;
        const [a, b, c] = launch.sockets as [Socket, Socket, Socket | undefined];
        const sockets = c ? { stdin: a, stdout: b, stderr: c } : { stdin: null, stdout: a, stderr: b };
        launch.handlers.spawned(message.pid, sockets);
        return;
      }
      case 'error':
        this.#launches.delete(launch.id);
        for (const socket of launch.sockets) socket.destroy();
        this.#unrefIfIdle();
        launch.handlers.failed(message.message);
        return;
      case 'exit':
        this.#launches.delete(launch.id);
        this.#unrefIfIdle();
        launch.handlers.exited(message.code, message.signal);
        return;
      default: {
        const never: never = message;
        throw new Error(`unknown spawner message ${JSON.stringify(never)}`);
      }
    }
  }

  #start(): Promise<boolean> {
    const dir = mkdtempSync(join(tmpdir(), 'sb-spawner-'));
    this.#dir = dir;
    // Its own process group, so whatever kills the daemon's group leaves it to end with the IPC channel.
    const child = spawn(process.execPath, [SPAWNER_MAIN, join(dir, 'spawner.sock')], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      detached: true,
    });
    this.#child = child;
    child.unref();
    const ready = new Promise<boolean>((resolve) => {
      child.on('message', (message: SpawnerMessage) => {
        if (message.t === 'ready') resolve(true);
        else this.#message(message);
      });
      child.once('error', (error) => {
        process.emitWarning(`could not start the agent spawner: ${error.message}; agents are spawned by the daemon`);
        this.#disabled = true;
        resolve(false);
      });
      child.once('exit', (code, signal) => {
        resolve(false);
        this.#exited(child, dir, signal ?? `exit code ${code}`);
      });
    });
    this.#ready = ready;
    return ready;
  }

  #exited(child: ChildProcess, dir: string, how: string): void {
    rmSync(dir, { recursive: true, force: true });
    if (this.#child !== child) return;
    this.#child = null;
    this.#ready = null;
    this.#dir = null;
    for (const launch of [...this.#launches.values()]) this.#lose(launch);
    if (this.#disabled) return;
    this.#restarts += 1;
    if (this.#restarts > MAX_RESTARTS) {
      this.#disabled = true;
      process.emitWarning(`the agent spawner keeps dying (last: ${how}); agents are spawned by the daemon from now on`);
    }
  }
}

/** Whether the spawner can run here: POSIX process groups and Unix sockets (not Windows). */
export const SPAWNER_SUPPORTED = process.platform !== 'win32';

/**
 * Whether agents are spawned through the spawner: opt-in with SWITCHBOARD_SPAWNER=1 (bench:burst measured no gain for
 * /healthz on a shared 2-core machine; see docs/architecture.md), read once.
 */
export const SPAWNER_ENABLED = SPAWNER_SUPPORTED && process.env.SWITCHBOARD_SPAWNER === '1';

let shared: AgentSpawner | null = null;

/** The daemon's one spawner, shared by every agent it starts; null where agents are spawned in the daemon. */
export function agentSpawner(): AgentSpawner | null {
  if (!SPAWNER_ENABLED) return null;
  shared ??= new AgentSpawner();
  return shared.available ? shared : null;
}

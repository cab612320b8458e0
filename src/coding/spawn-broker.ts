// The daemon's side of the spawn broker (spawn-broker-main.mjs): agent processes are spawned by a small helper process,
// so a launch never blocks the daemon's event loop for a fork of the daemon's whole memory. Each agent is an AgentChild
// whose stdio and exit arrive over the broker's IPC channel.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { AgentChild, AgentSpawnRequest } from './agent-child.ts';

const BROKER_MAIN = fileURLToPath(new URL('./spawn-broker-main.mjs', import.meta.url));

/** What the broker tells about one child. */
type BrokerReport =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'error'; id: number; message: string }
  | { op: 'out' | 'err'; id: number; data: Uint8Array }
  | { op: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

/** What the daemon asks of the broker. */
type BrokerRequest =
  | ({ op: 'spawn'; id: number } & AgentSpawnRequest)
  | { op: 'in'; id: number; data: Uint8Array }
  | { op: 'in-end'; id: number }
  | { op: 'kill'; id: number; signal: NodeJS.Signals };

/** An agent process spawned by the broker, as seen from the daemon. */
class BrokeredChild extends EventEmitter implements AgentChild {
  readonly stdin: Writable | null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly spawnfile: string;
  pid: number | undefined = undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  killed = false;
  #id: number;
  #send: (request: BrokerRequest) => void;
  #closed = false;
  #failed = false;

  constructor(id: number, request: AgentSpawnRequest, send: (request: BrokerRequest) => void) {
    super();
    this.#id = id;
    this.#send = send;
    this.spawnfile = request.command;
    this.stdin =
      request.stdin === 'pipe'
        ? new Writable({
            write: (chunk: Buffer, _encoding, done) => {
              if (!this.#closed) this.#send({ op: 'in', id: this.#id, data: chunk });
              done();
            },
            final: (done) => {
              if (!this.#closed) this.#send({ op: 'in-end', id: this.#id });
              done();
            },
          })
        : null;
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#closed) return false;
    this.killed = true;
    this.#send({ op: 'kill', id: this.#id, signal });
    return true;
  }

  /** Takes one report of the broker about this child. */
  report(report: BrokerReport): void {
    if (report.op === 'spawned') {
      this.pid = report.pid;
    } else if (report.op === 'out' || report.op === 'err') {
      const data = Buffer.from(report.data.buffer, report.data.byteOffset, report.data.byteLength);
      (report.op === 'out' ? this.stdout : this.stderr).write(data);
    } else if (report.op === 'error') {
      this.fail(report.message);
    } else if (report.op === 'close') {
      this.close(report.code, report.signal);
    }
  }

  /** The process could not be started (or the broker went away first): told once, as a child process tells it. */
  fail(message: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.emit('error', new Error(message));
  }

  /** The process ended (or the broker did): ends its output streams and tells `close`. */
  close(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#closed) return;
    this.#closed = true;
    this.exitCode = code;
    this.signalCode = signal;
    this.stdout.end();
    this.stderr.end();
    this.stdin?.destroy();
    this.emit('exit', code, signal);
    this.emit('close', code, signal);
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    // Already gone is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Starts the broker on first use and hands out its children; restarts it if it died. */
export class SpawnBroker {
  #process: ChildProcess | null = null;
  #children = new Map<number, BrokeredChild>();
  #nextId = 1;

  /** Asks the broker for an agent process; its stdio and exit follow asynchronously. */
  spawn(request: AgentSpawnRequest): AgentChild {
    const broker = this.#broker();
    const id = this.#nextId;
    this.#nextId += 1;
    const child = new BrokeredChild(id, request, (message) => this.#send(message));
    this.#children.set(id, child);
    child.once('close', () => {
      this.#children.delete(id);
      this.#holdOpen();
    });
    this.#holdOpen();
    if (broker.connected) broker.send({ op: 'spawn', id, ...request } satisfies BrokerRequest);
    return child;
  }

  #send(request: BrokerRequest): void {
    const broker = this.#process;
    if (broker?.connected) broker.send(request);
  }

  /** Keeps the daemon's event loop alive through the broker's channel only while it has children. */
  #holdOpen(): void {
    const broker = this.#process;
    if (!broker) return;
    if (this.#children.size > 0) {
      broker.ref();
      broker.channel?.ref();
    } else {
      broker.unref();
      broker.channel?.unref();
    }
  }

  #broker(): ChildProcess {
    if (this.#process) return this.#process;
    const broker = spawn(process.execPath, [BROKER_MAIN], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced' });
    broker.on('message', (report: BrokerReport) => this.#children.get(report.id)?.report(report));
    const lost = (reason: string): void => {
      if (this.#process !== broker) return;
      this.#process = null;
      const children = [...this.#children.values()];
      this.#children.clear();
      for (const child of children) {
        // Its output went through the broker and is gone: stop it rather than leave it running unwatched.
        if (child.pid !== undefined) killQuietly(child.pid);
        else child.fail(`the spawn broker ${reason}`);
        child.close(null, 'SIGKILL');
      }
    };
    broker.once('error', (error) => lost(`could not run: ${error.message}`));
    broker.once('exit', (code, signal) => lost(`exited (${signal ?? `code ${code}`})`));
    this.#process = broker;
    return broker;
  }
}

// Steering a session that another node runs: the caller stores a command for that node and waits (LISTEN, with a
// short poll behind it, bounded) for its answer; every node runs the commands stored for it, one at a time, each once.
// A node that is down is not asked: the caller is told at once. A lost node's unfinished commands are failed on
// takeover, and a restarted node fails those its previous run had claimed (they may have taken effect; never twice).
import type { Clock, Timer } from '../core/clock.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { ClusterCommand, ClusterCommandStore, CommandError } from '../store/cluster-commands.ts';
import { COMMAND_CHANNEL, COMMAND_DONE_CHANNEL } from '../store/cluster-commands.ts';
import type { ClusterNodeStore } from '../store/cluster-nodes.ts';
import type { PgListener } from './pg-listener.ts';

/** Runs one command on this node (an operation by name with its arguments); what it resolves with is the answer. */
export type CommandExecutor = (kind: string, payload: unknown) => Promise<unknown>;

/** How ClusterCommands is built. */
export interface ClusterCommandsDeps {
  store: ClusterCommandStore;
  nodes: ClusterNodeStore;
  listener: PgListener;
  clock: Clock;
  logger: Logger;
  /** This node's name. */
  name: string;
  /** A node whose heartbeat is older than this (ms) is down. */
  nodeTimeoutMs: number;
  /** How long a caller waits for an answer (ms). */
  waitMs: number;
  /** How often a caller looks for its answer, besides NOTIFY (ms). */
  pollMs: number;
  /** How often a node looks for its commands, besides NOTIFY (ms). */
  drainMs: number;
}

/** How long a finished command is kept (for a look at what was asked of a node) before it is pruned. */
const KEEP_FINISHED_MS = 3_600_000;

/** `error` as an Error (a rejection of the store's client is one already). */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The error of a failed command, as the caller throws it. */
function errorOf(error: CommandError): AppError {
  return new AppError(error.kind, error.message);
}

/** This node's side of the command queue: calling other nodes, and running what they ask of this one. */
export class ClusterCommands {
  readonly #d: ClusterCommandsDeps;
  /** Claims of this process (a restarted node fails the ones its previous process claimed). */
  readonly #incarnation = newId(16);
  readonly #waiters = new Map<string, () => void>();
  #executor: CommandExecutor | null = null;
  #draining: Promise<void> = Promise.resolve();
  #again = false;
  #timer: Timer | null = null;

  constructor(deps: ClusterCommandsDeps) {
    this.#d = deps;
    deps.listener.on(COMMAND_CHANNEL, (target) => {
      if (target === deps.name) this.#kick();
    });
    deps.listener.on(COMMAND_DONE_CHANNEL, (id) => this.#waiters.get(id)?.());
    // What was notified while the LISTEN connection was away is looked at again once it is back.
    deps.listener.onConnect(() => {
      this.#kick();
      for (const wake of this.#waiters.values()) wake();
    });
  }

  /**
   * Runs `kind` with `payload` on node `target` and resolves with its answer; rejects with its error, with
   * `unavailable` when the node is down (at once) or did not answer within the wait.
   */
  async call(target: string, kind: string, payload: unknown): Promise<unknown> {
    const { nodes, store, clock, nodeTimeoutMs } = this.#d;
    const node = await nodes.get(target);
    if (!node) throw new AppError('not_found', `node ${target} is not a node of this cluster`);
    if (node.status === 'down' || clock.now() - node.heartbeatAt > nodeTimeoutMs)
      throw new AppError('unavailable', `node ${target} is down`);
    const id = newId(16);
    await store.submit({ id, target, kind, payload }, clock.now());
    const done = await this.#wait(id);
    if (done.status === 'done') return done.result;
    throw errorOf(done.error ?? { kind: 'internal', message: `node ${target} failed the command` });
  }

  /** Waits until command `id` finished, or gives up after `waitMs` (failing it if nobody claimed it yet). */
  #wait(id: string): Promise<ClusterCommand> {
    const { store, clock, waitMs, pollMs } = this.#d;
    return new Promise<ClusterCommand>((resolve, reject) => {
      let checking = false;
      let poll: Timer | null = null;
      let limit: Timer | null = null;
      const settle = (outcome: () => void): void => {
        poll?.cancel();
        limit?.cancel();
        this.#waiters.delete(id);
        outcome();
      };
      const check = (): void => {
        if (checking) return;
        checking = true;
        store
          .get(id)
          .then((command) => {
            checking = false;
            if (command && (command.status === 'done' || command.status === 'failed')) settle(() => resolve(command));
          })
          .catch((error: unknown) => settle(() => reject(asError(error))));
      };
      this.#waiters.set(id, check);
      poll = clock.every(pollMs, check);
      limit = clock.after(waitMs, () => {
        const seconds = Math.round(waitMs / 1000);
        const error = { kind: 'unavailable' as const, message: `the node did not take the command within ${seconds}s` };
        store
          .abandon(id, error, clock.now())
          .then((abandoned) =>
            settle(() =>
              reject(
                abandoned
                  ? errorOf(error)
                  : new AppError('unavailable', `the node did not finish the command within ${seconds}s`),
              ),
            ),
          )
          .catch((e: unknown) => settle(() => reject(asError(e))));
      });
      check();
    });
  }

  /** Runs the commands stored for this node, one at a time, until none is left; later kicks run again after. */
  #kick(): void {
    if (!this.#executor) return;
    this.#again = true;
    this.#draining = this.#draining.then(async () => {
      while (this.#again) {
        this.#again = false;
        await this.#drain();
      }
    });
  }

  async #drain(): Promise<void> {
    const { store, clock, logger, name } = this.#d;
    const executor = this.#executor;
    if (!executor) return;
    try {
      for (let c = await store.claimNext(name, this.#incarnation, clock.now()); c;) {
        let outcome: Parameters<ClusterCommandStore['finish']>[2];
        try {
          outcome = { ok: true, result: await executor(c.kind, c.payload) };
        } catch (error) {
          const kind = error instanceof AppError ? error.kind : 'internal';
          outcome = { ok: false, error: { kind, message: errorMessage(error) } };
        }
        await store.finish(c.id, this.#incarnation, outcome, clock.now());
        c = await store.claimNext(name, this.#incarnation, clock.now());
      }
      await store.prune(clock.now() - KEEP_FINISHED_MS);
    } catch (error) {
      logger.warn({ err: error }, 'running the commands for this node failed; retrying at the next poll');
    }
  }

  /** Fails what a lost node left unfinished (takeover; idempotent). */
  async takeOver(node: string): Promise<void> {
    const failed = await this.#d.store.failTarget(
      node,
      { kind: 'unavailable', message: `node ${node} is down` },
      this.#d.clock.now(),
    );
    if (failed.length > 0) this.#d.logger.warn({ node, commands: failed }, `commands for lost node ${node} failed`);
  }

  /**
   * Starts running this node's commands with `executor`: first fails those an earlier run of this node had claimed
   * (never run twice), then runs the queued ones, and looks again every `drainMs` besides NOTIFY.
   */
  async start(executor: CommandExecutor): Promise<void> {
    const { store, clock, name, drainMs } = this.#d;
    const message = `node ${name} restarted while running the command; it may or may not have taken effect`;
    await store.failTarget(name, { kind: 'unavailable', message }, clock.now(), {
      exceptIncarnation: this.#incarnation,
    });
    this.#executor = executor;
    this.#timer = clock.every(drainMs, () => this.#kick());
    this.#kick();
  }

  /** Stops running commands (the one under way finishes). */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = null;
    this.#executor = null;
    await this.#draining;
  }
}

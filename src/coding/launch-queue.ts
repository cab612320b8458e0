// The cluster's launch queue (PostgreSQL) as this node serves it: a launch no node could ever run is refused at once;
// any other is stored `queued` (acknowledged once committed, with its position) and NOTIFY wakes every node. Each node
// claims the oldest queued launch it can run whenever it has a free slot: when a launch is queued, when one of its
// sessions ends, at every heartbeat and at start. A node never exceeds `maxSessions`: claims are admitted one at a
// time with this node's launches and resumes.
import { resolve } from 'node:path';
import type { Transaction } from 'kysely';
import type { Clock, Timer } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { expandHome } from '../core/config-load.ts';
import { AppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { ClusterNodeStore } from '../store/cluster-nodes.ts';
import type { Placement, StoredSession } from '../store/coding-session-types.ts';
import type { LaunchQueueStore, NodeAbility } from '../store/launch-queue.ts';
import type { Database } from '../store/tables/index.ts';
import { placementRefusal } from './placement.ts';
import type { Session } from './session.ts';
import type { LaunchRequest, SessionManager } from './session-manager.ts';

/** How a LaunchQueue is built. */
export interface LaunchQueueDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  sessions: SessionManager;
  store: LaunchQueueStore;
  nodes: ClusterNodeStore;
  /** What this node can run. */
  ability: NodeAbility;
  /** How often a node looks at the queue unasked (its heartbeat). */
  passMs: number;
}

/** What else a queued launch carries. */
export interface LaunchOptions {
  /** Runs in the transaction that stores it (an idempotency key's answer). */
  onStored?: (record: StoredSession, trx: Transaction<Database>) => Promise<void>;
  /** The session it continues (resume --anywhere). */
  resumedFrom?: string;
}

/** A launch as the queue answers it: started here at once, or waiting (`position`: 1 is next), or started elsewhere. */
export interface QueuedLaunch {
  record: StoredSession;
  /** The Session when it started on this node during the launch. */
  session?: Session;
  /** Its place in the queue when still queued (1: the next to start), else null. */
  position: number | null;
}

/** This node's side of the cluster's launch queue. */
export class LaunchQueue {
  readonly #d: LaunchQueueDeps;
  #tail: Promise<unknown> = Promise.resolve();
  #timer: Timer | null = null;
  #unsubscribe: (() => void) | null = null;

  constructor(deps: LaunchQueueDeps) {
    this.#d = deps;
  }

  /**
   * Queues a launch: refused (invalid_input naming why) when no node of the cluster could ever run it; else stored
   * `queued` with its placement and `onStored` in one transaction, the nodes woken on commit, and this node given the
   * first chance to start it (or older launches) at once.
   */
  async launch(request: LaunchRequest, placement: Placement, options: LaunchOptions = {}): Promise<QueuedLaunch> {
    const { onStored, resumedFrom } = options;
    const { config, sessions, store, nodes } = this.#d;
    placement = await this.#withResumedNode(request, placement);
    const ask = {
      harness: request.harness ?? config.defaultHarness,
      workdir: resolve(expandHome(request.workdir ?? config.defaultWorkdir ?? process.cwd())),
      ...(placement.on !== undefined ? { on: placement.on } : {}),
      ...(placement.labels ? { labels: placement.labels } : {}),
    };
    const refusal = placementRefusal(await nodes.list(), ask);
    if (refusal) throw refusal;
    const queued = await sessions.enqueue(
      { ...request, workdir: ask.workdir },
      placement,
      async (record, trx) => {
        await store.notify(trx);
        await onStored?.(record, trx);
      },
      resumedFrom ? { resumedFrom } : {},
    );
    const started = await this.pass(request.via ? { id: queued.id, via: request.via } : undefined);
    const here = started.find((s) => s.id === queued.id);
    if (here) return { record: { ...here.record }, session: here, position: null };
    const position = await store.position(queued.id);
    return { record: position === null ? await sessions.get(queued.id) : queued, position };
  }

  /**
   * A launch that continues an earlier agent session (`resumeSessionRef`) runs where that session's history is: on
   * the node that ran it, unless `on` says otherwise.
   */
  async #withResumedNode(request: LaunchRequest, placement: Placement): Promise<Placement> {
    if (!request.resumeSessionRef || placement.on !== undefined) return placement;
    try {
      const from = await this.#d.sessions.get(request.resumeSessionRef);
      return from.node ? { ...placement, on: from.node } : placement;
    } catch (error) {
      // An agent's own session id switchboard never stored: no node to prefer.
      if (error instanceof AppError && error.kind === 'not_found') return placement;
      throw error;
    }
  }

  /**
   * One pass: while this node has a free slot, claims the oldest queued launch it can run and starts it. Passes run
   * one at a time; resolves with the sessions this pass started.
   */
  pass(via?: { id: string; via: string }): Promise<Session[]> {
    const run = this.#tail.then(() => this.#pass(via));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #pass(via?: { id: string; via: string }): Promise<Session[]> {
    const { sessions, store, ability, clock } = this.#d;
    const started: Session[] = [];
    for (;;) {
      const session = await sessions.claimAndStart(() => store.claimNext(ability, clock.now()), via);
      if (!session) return started;
      started.push(session);
    }
  }

  /** A pass started by a trigger (a NOTIFY, a session's end, the timer): errors are logged, the next trigger retries. */
  kick(): void {
    this.pass().catch((error: unknown) =>
      this.#d.logger.warn({ err: error }, 'claiming a queued launch failed; retrying at the next heartbeat'),
    );
  }

  /** Starts looking at the queue: now, at every `passMs`, and whenever one of this node's sessions ends. */
  start(): void {
    this.#unsubscribe = this.#d.sessions.on((signal) => {
      if (signal.type === 'ended') this.kick();
    });
    this.#timer = this.#d.clock.every(this.#d.passMs, () => this.kick());
    this.kick();
  }

  /** Stops the triggers and waits for a pass under way. */
  async stop(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = null;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    await this.#tail;
  }
}

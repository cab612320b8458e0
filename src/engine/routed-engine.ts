// The engine as every node of a cluster sees it. The engine runs on one node (the holder of the `primary` lease); on
// that node every call goes straight to it. On any other node a call is stored in `engine_calls` and run by the
// holder's EngineCallWorker, and the caller waits for its outcome (NOTIFY, and a poll): the RPC `engine.send`, `agents.*`
// and a web page message work on every node. `listSessions` is synchronous and shows only what the local engine holds;
// `sessions()` (the `agents` listing) is routed like the calls, so every node lists the holder's live sessions.
import type { InboundMessage } from '../channels/connector.ts';
import type { Clock, Timer } from '../core/clock.ts';
import type { ErrorKind } from '../core/errors.ts';
import { AppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineCall, EngineCallStore } from '../store/engine-calls.ts';
import { ENGINE_CALLS_CHANNEL, ENGINE_RESULTS_CHANNEL } from '../store/engine-calls.ts';
import type { Accepted, EngineControl, EngineSessionSummary, MessageRoute, PostOptions } from './api.ts';

/** Notifications of the node's LISTEN connection, by shape (cluster/pg-listener.ts). */
export interface CallNotices {
  on(channel: string, handler: (payload: string) => void): () => void;
}

/** How a RoutedEngine is built. */
export interface RoutedEngineOptions {
  local: EngineControl;
  /** True while this node serves the engine. */
  servesEngine: () => boolean;
  calls: EngineCallStore;
  notices: CallNotices | null;
  clock: Clock;
  /** How often a waiting caller reads its call's outcome without a notification. */
  pollMs: number;
  /** How long a caller waits for the holder (plus an askAgent's own timeout). */
  timeoutMs: number;
}

/** The engine's methods a node that does not serve it routes to the one that does. */
type RoutedMethod =
  | 'acceptUserMessage'
  | 'postSystemMessage'
  | 'postScheduled'
  | 'startBackgroundAgent'
  | 'askAgent'
  | 'sendFromSession'
  | 'listSessions';

/** The EngineControl of a node: the local engine when it serves it, else calls run by the node that does. */
export class RoutedEngine implements EngineControl {
  readonly #o: RoutedEngineOptions;

  constructor(options: RoutedEngineOptions) {
    this.#o = options;
  }

  acceptUserMessage(message: InboundMessage): Promise<Accepted> {
    return this.#route('acceptUserMessage', [message], () => this.#o.local.acceptUserMessage(message));
  }

  postSystemMessage(
    route: MessageRoute,
    text: string,
    origin: string,
    options?: PostOptions,
  ): Promise<Accepted | null> {
    return this.#route('postSystemMessage', [route, text, origin, options ?? {}], () =>
      this.#o.local.postSystemMessage(route, text, origin, options),
    );
  }

  postScheduled(
    descriptor: { type: 'cron'; id: string } | { type: 'heartbeat' },
    text: string,
    origin: string,
    options?: PostOptions,
  ): Promise<Accepted> {
    return this.#route('postScheduled', [descriptor, text, origin, options ?? {}], () =>
      this.#o.local.postScheduled(descriptor, text, origin, options),
    );
  }

  startBackgroundAgent(input: {
    prompt: string;
    name: string;
    parentSessionId?: string;
  }): Promise<{ sessionId: string }> {
    return this.#route('startBackgroundAgent', [input], () => this.#o.local.startBackgroundAgent(input));
  }

  askAgent(input: {
    prompt: string;
    name: string;
    parentSessionId?: string;
    timeoutMs?: number;
  }): Promise<{ sessionId: string; text: string }> {
    return this.#route('askAgent', [input], () => this.#o.local.askAgent(input), input.timeoutMs ?? 0);
  }

  sendFromSession(fromId: string, text: string, targetId?: string): Promise<Accepted> {
    return this.#route('sendFromSession', [fromId, text, targetId ?? null], () =>
      this.#o.local.sendFromSession(fromId, text, targetId),
    );
  }

  listSessions(): EngineSessionSummary[] {
    return this.#o.servesEngine() ? this.#o.local.listSessions() : [];
  }

  sessions(): Promise<EngineSessionSummary[]> {
    return this.#route('listSessions', [], () => this.#o.local.sessions());
  }

  async #route<T>(method: RoutedMethod, args: unknown[], local: () => Promise<T>, extraMs = 0): Promise<T> {
    if (this.#o.servesEngine()) return local();
    const { calls, clock } = this.#o;
    const id = await calls.enqueue(method, args, clock.now());
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let checking = false;
      const timers: Timer[] = [];
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        unlisten?.();
        for (const timer of timers) timer.cancel();
        outcome();
      };
      const check = (): void => {
        if (settled || checking) return;
        checking = true;
        calls
          .outcome(id)
          .then((outcome) => {
            if (outcome?.status === 'done') finish(() => resolve(outcome.result as T));
            else if (outcome?.status === 'failed')
              finish(() =>
                reject(new AppError(outcome.error.kind as ErrorKind, outcome.error.message, outcome.error.field)),
              );
          })
          .catch((error: unknown) => finish(() => reject(error instanceof Error ? error : new Error(String(error)))))
          .finally(() => (checking = false));
      };
      const unlisten = this.#o.notices?.on(ENGINE_RESULTS_CHANNEL, (payload) => {
        if (payload === String(id)) check();
      });
      timers.push(clock.every(this.#o.pollMs, check));
      timers.push(
        clock.after(this.#o.timeoutMs + extraMs, () =>
          finish(() =>
            reject(new AppError('unavailable', `the node serving the engine did not answer ${method} in time`)),
          ),
        ),
      );
      check();
    });
  }
}

/** How an EngineCallWorker is built. */
export interface EngineCallWorkerOptions {
  engine: EngineControl;
  calls: EngineCallStore;
  notices: CallNotices | null;
  /** This run of the node (the claims' owner), read at each start and claim: it changes when the node rejoins. */
  holder: string | (() => string);
  clock: Clock;
  logger: Logger;
  pollMs: number;
}

/** Runs the calls other nodes stored, on the node serving the engine (a member of `primary`, after the engine). */
export class EngineCallWorker {
  readonly #o: EngineCallWorkerOptions;
  #running = false;
  #draining: Promise<void> | null = null;
  #again = false;
  #inFlight = new Set<Promise<void>>();
  #unlisten: (() => void) | null = null;
  #poll: Timer | null = null;

  constructor(options: EngineCallWorkerOptions) {
    this.#o = options;
  }

  /** Makes the calls a dead holder left running pending again, then runs what is pending and listens for more. */
  async start(): Promise<void> {
    const { calls, clock } = this.#o;
    const holder = this.#holder();
    const reclaimed = await calls.reclaim(holder);
    if (reclaimed > 0) this.#o.logger.info({ reclaimed }, 'engine calls left by the previous holder run again');
    await calls.prune(clock.now() - 24 * 3600_000);
    this.#running = true;
    this.#unlisten = this.#o.notices?.on(ENGINE_CALLS_CHANNEL, () => this.#drain()) ?? null;
    this.#poll = clock.every(this.#o.pollMs, () => this.#drain());
    this.#drain();
  }

  /** Stops claiming calls and waits for those running. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#unlisten?.();
    this.#poll?.cancel();
    await this.#draining;
    await Promise.all([...this.#inFlight]);
  }

  #holder(): string {
    const { holder } = this.#o;
    return typeof holder === 'string' ? holder : holder();
  }

  #drain(): void {
    if (!this.#running) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = this.#claimAll()
      .catch((error: unknown) => this.#o.logger.warn({ err: error }, 'could not claim engine calls; retrying'))
      .finally(() => {
        this.#draining = null;
        if (this.#again) {
          this.#again = false;
          this.#drain();
        }
      });
  }

  async #claimAll(): Promise<void> {
    while (this.#running) {
      const call = await this.#o.calls.claim(this.#holder());
      if (!call) return;
      // Run side by side (an askAgent waits for a reply); each writes its own outcome.
      const run = this.#run(call).finally(() => this.#inFlight.delete(run));
      this.#inFlight.add(run);
    }
  }

  async #run(call: EngineCall): Promise<void> {
    let outcome: { status: 'done'; result: unknown } | { status: 'failed'; error: { kind: string; message: string } };
    try {
      outcome = { status: 'done', result: (await invoke(this.#o.engine, call)) ?? null };
    } catch (error) {
      const kind = error instanceof AppError ? error.kind : 'internal';
      outcome = { status: 'failed', error: { kind, message: error instanceof Error ? error.message : String(error) } };
    }
    try {
      await this.#o.calls.finish(call.id, outcome, this.#o.clock.now());
    } catch (error) {
      this.#o.logger.error({ err: error, call: call.id }, 'could not record the outcome of an engine call');
    }
  }
}

/** Runs one stored call on the engine (its arguments are checked by the engine itself). */
function invoke(engine: EngineControl, call: EngineCall): Promise<unknown> {
  const a = call.args;
  const method = call.method as RoutedMethod;
  switch (method) {
    case 'acceptUserMessage':
      return engine.acceptUserMessage(a[0] as InboundMessage);
    case 'postSystemMessage':
      return engine.postSystemMessage(a[0] as MessageRoute, a[1] as string, a[2] as string, a[3] as PostOptions);
    case 'postScheduled':
      return engine.postScheduled(
        a[0] as { type: 'cron'; id: string } | { type: 'heartbeat' },
        a[1] as string,
        a[2] as string,
        a[3] as PostOptions,
      );
    case 'startBackgroundAgent':
      return engine.startBackgroundAgent(a[0] as { prompt: string; name: string; parentSessionId?: string });
    case 'askAgent':
      return engine.askAgent(a[0] as { prompt: string; name: string; parentSessionId?: string; timeoutMs?: number });
    case 'sendFromSession':
      return engine.sendFromSession(a[0] as string, a[1] as string, (a[2] as string | null) ?? undefined);
    case 'listSessions':
      return engine.sessions();
    default:
      method satisfies never;
      return Promise.reject(new AppError('invalid_input', `not an engine call: ${String(call.method)}`));
  }
}

// Services served together as one singleton (the `primary` lease): the outbox's deliveries, the engine, the scheduler,
// the wake router and the chat connectors' receiving always run on one node, so the engine's replies, the pollers'
// messages and the deliveries never cross nodes. Members start in order and stop in reverse; each is stopped at most
// once per start, whether by the lease being lost or by the daemon's own stop (which stops them one by one in the order
// the daemon needs, see src/daemon/singletons.ts).
import type { Logger } from '../core/logger.ts';
import type { SingletonService } from './singletons.ts';

interface Member {
  name: string;
  service: SingletonService;
  running: boolean;
}

/** How a ServiceGroup is built. */
export interface ServiceGroupOptions {
  logger: Logger;
  /**
   * False when a member cannot start twice in one process: the group is then served once. `primary` is restartable
   * (every member starts again after a stop, the engine restoring anew), so a node that rejoined serves it again.
   */
  restartable: boolean;
}

/** A group of services started and stopped together; itself a SingletonService. */
export class ServiceGroup implements SingletonService {
  readonly restartable: boolean;
  readonly #members: Member[] = [];
  readonly #logger: Logger;
  #used = false;
  #failure: unknown = null;
  /** Whether this node's hold on the group's lease is fresh (bound by Singletons; always true when not bound). */
  #held: () => boolean = () => true;

  constructor(options: ServiceGroupOptions) {
    this.#logger = options.logger;
    this.restartable = options.restartable;
  }

  /** The error of the last failed start (null when none failed). */
  get failure(): unknown {
    return this.#failure;
  }

  /** Adds a member, started after those added before it and stopped before them. Names are unique. */
  add(name: string, service: SingletonService): void {
    if (this.#members.some((m) => m.name === name)) throw new Error(`service ${name} is already in the group`);
    this.#members.push({ name, service, running: false });
  }

  /** Called by Singletons when the group is added to it (see `SingletonService.bindLease`). */
  bindLease(held: () => boolean): void {
    this.#held = held;
  }

  /**
   * Names of the members running now, in order of start; none while this node's hold on the group's lease is not fresh
   * (stalled past most of it: another node may serve the group already), so callers route as a non-holder would.
   */
  running(): string[] {
    if (!this.#held()) return [];
    return this.#members.filter((m) => m.running).map((m) => m.name);
  }

  /** Starts every member in order; when one fails, stops those started and rethrows (and keeps it as `failure`). */
  async start(): Promise<void> {
    if (this.#used && !this.restartable)
      throw new Error('this group was served once already: restart the daemon to serve it here again');
    this.#used = true;
    for (const member of this.#members) {
      try {
        await member.service.start();
        member.running = true;
      } catch (error) {
        this.#failure = error;
        await this.stop();
        throw error;
      }
    }
  }

  /** Stops the running members in reverse order; errors are logged and the others still stopped. */
  async stop(): Promise<void> {
    for (const member of [...this.#members].reverse()) await this.stopMember(member.name);
  }

  /** Stops one member if it runs (the daemon's stop calls these in its own order); a no-op otherwise. */
  async stopMember(name: string): Promise<void> {
    const member = this.#members.find((m) => m.name === name);
    if (!member?.running) return;
    member.running = false;
    try {
      await member.service.stop();
    } catch (error) {
      this.#logger.error({ err: error, service: name }, `error while stopping ${name}`);
    }
  }
}

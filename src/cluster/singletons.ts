// Singletons: services that must run on exactly one node of the cluster at a time (a chat poller per account, the cron
// clock, the Linear monitor, the outbox's deliveries, the engine). Each is served by the node holding its lease in
// `cluster_leases`; the holder renews it on every heartbeat, and a node that cannot renew in time stops the service
// itself before the lease can expire, so two nodes never serve one singleton at once. On SQLite (a cluster of one) the
// one node takes every lease at its first pass.
import type { Logger } from '../core/logger.ts';
import type { LeaseHolder, LeaseStore } from '../store/cluster-leases.ts';

/** A service one node serves at a time: started when this node takes its lease, stopped when it loses it. */
export interface SingletonService {
  /** Starts serving; called once per taking of the lease (a takeover runs the service's own recovery here). */
  start(): Promise<void>;
  /** Stops serving (lease lost or the daemon stopping). */
  stop(): Promise<void>;
  /**
   * False for a service that cannot start again in this process: once stopped, or when its start failed,
   * this node gives its lease up for good and leaves it to the others. Default true.
   */
  readonly restartable?: boolean;
  /**
   * Given once, when the service is added to Singletons: `held()` is true while this node's hold on the lease is fresh
   * (see `Singletons.holds`). A service that takes work in on the holder only asks it before taking some in.
   */
  bindLease?(held: () => boolean): void;
}

interface Entry {
  name: string;
  service: SingletonService;
  running: boolean;
  /** A service that cannot start again, stopped or failed once: this node no longer takes its lease. */
  retired: boolean;
  /** When this node last renewed the lease (for self-fencing). */
  renewedAt: number;
}

/** How the singletons are built. */
export interface SingletonsOptions {
  leases: LeaseStore;
  holder: LeaseHolder;
  now: () => number;
  /** A lease lasts this long from its last renewal. */
  leaseMs: number;
  logger: Logger;
}

/** The singletons of this node: which leases it holds and which services run because of them. */
export class Singletons {
  readonly #o: SingletonsOptions;
  readonly #entries = new Map<string, Entry>();
  #pass: Promise<void> = Promise.resolve();
  #stopped = false;
  /** Between `fence` and `rejoin`: no pass takes a lease. */
  #fenced = false;
  #holder: LeaseHolder;

  constructor(options: SingletonsOptions) {
    this.#o = options;
    this.#holder = options.holder;
  }

  /** Adds a singleton; it starts at the next pass that takes its lease. Names are unique. */
  add(name: string, service: SingletonService): void {
    if (this.#entries.has(name)) throw new Error(`singleton ${name} is already registered`);
    this.#entries.set(name, { name, service, running: false, retired: false, renewedAt: 0 });
    service.bindLease?.(() => this.holds(name));
  }

  /**
   * True while this node serves `name` and renewed its lease within 80% of the lease, by this node's clock. A node
   * that was stalled (a long pause, SIGSTOP) may have been declared lost meanwhile and its lease taken, and it learns
   * so only at its next pass: until then this is already false, so what it would take in (a message for the engine)
   * goes the way of a node that does not hold the lease.
   */
  holds(name: string): boolean {
    const entry = this.#entries.get(name);
    return !!entry?.running && this.#o.now() - entry.renewedAt <= this.#o.leaseMs * 0.8;
  }

  /** Names of the singletons this node serves now. */
  served(): string[] {
    return [...this.#entries.values()].filter((e) => e.running).map((e) => e.name);
  }

  /**
   * One pass: takes or renews every lease, starts what it newly holds, stops what it lost. Passes never overlap;
   * resolves when this one is done. A failing start is logged and retried at the next pass (the lease is given up).
   */
  pass(): Promise<void> {
    this.#pass = this.#pass.then(() => this.#runPass());
    return this.#pass;
  }

  async #runPass(): Promise<void> {
    if (this.#stopped || this.#fenced) return;
    for (const entry of this.#entries.values()) {
      if (entry.retired) continue;
      const now = this.#o.now();
      let held: boolean;
      try {
        held = await this.#o.leases.acquire(entry.name, this.#holder, now, now + this.#o.leaseMs);
      } catch (error) {
        this.#o.logger.warn({ err: error, singleton: entry.name }, 'could not renew a singleton lease');
        // Self-fencing: past most of the lease without a renewal, stop before another node may take it.
        if (entry.running && this.#o.now() - entry.renewedAt > this.#o.leaseMs * 0.8) await this.#stopOne(entry);
        continue;
      }
      if (held) {
        entry.renewedAt = now;
        if (!entry.running) await this.#startOne(entry);
      } else if (entry.running) {
        await this.#stopOne(entry);
      }
    }
  }

  async #startOne(entry: Entry): Promise<void> {
    try {
      await entry.service.start();
      entry.running = true;
      this.#o.logger.info({ singleton: entry.name }, `serving ${entry.name} on this node`);
    } catch (error) {
      this.#o.logger.error({ err: error, singleton: entry.name }, `could not start ${entry.name}; retrying`);
      this.#retireIfOneShot(entry);
      await this.#release(entry);
    }
  }

  async #stopOne(entry: Entry): Promise<void> {
    entry.running = false;
    try {
      await entry.service.stop();
    } catch (error) {
      this.#o.logger.error({ err: error, singleton: entry.name }, `error while stopping ${entry.name}`);
    }
    this.#o.logger.info({ singleton: entry.name }, `no longer serving ${entry.name} on this node`);
    if (!this.#stopped) {
      this.#retireIfOneShot(entry);
      if (entry.retired) await this.#release(entry);
    }
  }

  #retireIfOneShot(entry: Entry): void {
    if (entry.service.restartable !== false) return;
    entry.retired = true;
    this.#o.logger.error(
      { singleton: entry.name },
      `${entry.name} cannot start again in this process: another node serves it (restart this daemon to serve it here)`,
    );
  }

  /**
   * This node was declared down while it ran: stops every singleton it serves (in reverse order; one that cannot start
   * again is retired, see `restartable`) and gives the leases up, after any pass under way. Later passes take leases
   * again only after `rejoin`. Resolves when done.
   */
  fence(): Promise<void> {
    this.#fenced = true;
    this.#pass = this.#pass.then(async () => {
      for (const entry of [...this.#entries.values()].reverse()) {
        if (entry.running) await this.#stopOne(entry);
        await this.#release(entry);
      }
    });
    return this.#pass;
  }

  /** After `fence`: the node joined again as `holder` (a new incarnation); the next pass takes leases under it. */
  rejoin(holder: LeaseHolder): void {
    this.#holder = holder;
    this.#fenced = false;
  }

  /** Gives `entry`'s lease up; a failure is logged (the lease then runs out by itself). */
  async #release(entry: Entry): Promise<void> {
    await this.#o.leases.release(entry.name, this.#holder).catch((error: unknown) => {
      this.#o.logger.warn({ err: error, singleton: entry.name }, 'could not give up a lease');
    });
  }

  /** Stops every singleton this node serves (in reverse order of registration) and gives their leases up. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#pass;
    for (const entry of [...this.#entries.values()].reverse()) {
      if (!entry.running) continue;
      await this.#stopOne(entry);
      await this.#release(entry);
    }
  }
}

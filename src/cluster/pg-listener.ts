// The node's one LISTEN connection to PostgreSQL: a dedicated `pg` client (LISTEN needs a session of its own, outside
// the pool) that listens on the cluster's channels and hands each notification to the subscribers of its channel. When
// the connection breaks it reconnects after `reconnectMs` and tells the `onConnect` subscribers, who re-read what they
// follow (notifications sent while it was away are lost). Notifications are only a hint that something committed:
// every subscriber reads the database itself, and polls as well, so a lost notification only delays it.
import pg from 'pg';
import type { Clock, Timer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';

/** How a PgListener is built. */
export interface PgListenerOptions {
  url: string;
  /** The channels to LISTEN on (fixed names: letters, digits and underscores). */
  channels: readonly string[];
  clock: Clock;
  logger: Logger;
  /** Wait before reconnecting after the connection broke. */
  reconnectMs: number;
}

type Handler = (payload: string) => void;

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

/** LISTENs on a few channels over one dedicated connection, reconnecting, fanning out to subscribers. */
export class PgListener {
  readonly #o: PgListenerOptions;
  readonly #handlers = new Map<string, Set<Handler>>();
  readonly #onConnect = new Set<() => void>();
  #client: pg.Client | null = null;
  #retry: Timer | null = null;
  #stopped = false;
  #connected = false;

  constructor(options: PgListenerOptions) {
    for (const channel of options.channels)
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
    this.#o = options;
  }

  /** True while the LISTEN connection is up. */
  get connected(): boolean {
    return this.#connected;
  }

  /** Calls `handler` with the payload of every notification on `channel`; returns the unsubscribe function. */
  on(channel: string, handler: Handler): () => void {
    if (!this.#o.channels.includes(channel)) throw new Error(`not a channel this listener listens on: ${channel}`);
    let set = this.#handlers.get(channel);
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Calls `handler` after every (re)connection (notifications sent while away are lost: re-read). */
  onConnect(handler: () => void): () => void {
    this.#onConnect.add(handler);
    return () => this.#onConnect.delete(handler);
  }

  /** Connects and LISTENs; resolves once listening, or after the first failure (it keeps retrying then). */
  async start(): Promise<void> {
    await this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const client = new pg.Client({ connectionString: this.#o.url });
    this.#client = client;
    client.on('notification', (message) => {
      for (const handler of this.#handlers.get(message.channel) ?? []) {
        try {
          handler(message.payload ?? '');
        } catch (error) {
          this.#o.logger.error({ err: error, channel: message.channel }, 'a notification subscriber failed');
        }
      }
    });
    client.on('error', (error) => this.#broken(client, error));
    client.on('end', () => this.#broken(client, new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of this.#o.channels) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      this.#broken(client, error);
      return;
    }
    if (this.#client !== client) return;
    this.#connected = true;
    for (const handler of this.#onConnect) handler();
  }

  #broken(client: pg.Client, error: unknown): void {
    if (this.#client !== client) return;
    this.#client = null;
    this.#connected = false;
    client.removeAllListeners('end');
    client.end().catch((e: unknown) => this.#o.logger.debug({ err: e }, 'closing a broken LISTEN connection failed'));
    if (this.#stopped) return;
    this.#o.logger.warn({ err: error }, 'the LISTEN connection to PostgreSQL broke; reconnecting');
    this.#retry = this.#o.clock.after(this.#o.reconnectMs, () => {
      this.#retry = null;
      void this.#connect();
    });
  }

  /** Closes the connection and stops reconnecting. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#retry?.cancel();
    this.#retry = null;
    const client = this.#client;
    this.#client = null;
    this.#connected = false;
    if (client) {
      client.removeAllListeners('end');
      await client
        .end()
        .catch((e: unknown) => this.#o.logger.debug({ err: e }, 'closing the LISTEN connection failed'));
    }
  }
}

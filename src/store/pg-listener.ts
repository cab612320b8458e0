// One dedicated PostgreSQL connection that LISTENs for the cluster's notifications (a queued launch, a command for
// this node) and hands each to its handler. A dropped connection is reopened after `retryMs`; every handler is then
// called once, as a notification may have been missed meanwhile.
import pg from 'pg';
import type { Clock, Timer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';

/** How a PgListener is built. */
export interface PgListenerOptions {
  url: string;
  clock: Clock;
  logger: Logger;
  /** Wait before reconnecting (default 1000 ms). */
  retryMs?: number;
}

/** LISTEN on a dedicated connection, reconnecting. Register handlers with `on` before `start`. */
export class PgListener {
  readonly #o: PgListenerOptions;
  readonly #handlers = new Map<string, ((payload: string) => void)[]>();
  #client: pg.Client | null = null;
  #retry: Timer | null = null;
  #stopped = false;

  constructor(options: PgListenerOptions) {
    this.#o = options;
  }

  /** Calls `handler` with the payload of every notification on `channel` (and with '' after a reconnect). */
  on(channel: string, handler: (payload: string) => void): void {
    this.#handlers.set(channel, [...(this.#handlers.get(channel) ?? []), handler]);
  }

  /** Connects and LISTENs on every channel; resolves once listening (or once a retry is scheduled). */
  async start(): Promise<void> {
    this.#stopped = false;
    await this.#connect(false);
  }

  async #connect(reconnected: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: this.#o.url });
    client.on('notification', (message) => this.#dispatch(message.channel, message.payload ?? ''));
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of this.#handlers.keys()) await client.query(`LISTEN "${channel}"`);
    } catch (error) {
      this.#lost(client, error);
      return;
    }
    if (this.#stopped) {
      await client.end();
      return;
    }
    this.#client = client;
    if (reconnected) for (const channel of this.#handlers.keys()) this.#dispatch(channel, '');
  }

  #dispatch(channel: string, payload: string): void {
    for (const handler of this.#handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.#o.logger.error({ err: error, channel }, 'a notification handler failed');
      }
    }
  }

  #lost(client: pg.Client, error: unknown): void {
    if (this.#stopped || (this.#client !== null && this.#client !== client)) return;
    this.#client = null;
    client.removeAllListeners('end');
    client.end().catch((e: unknown) => this.#o.logger.debug({ err: e }, 'closing a dropped LISTEN connection failed'));
    if (this.#retry) return;
    this.#o.logger.warn({ err: error }, 'the LISTEN connection to PostgreSQL dropped; reconnecting');
    this.#retry = this.#o.clock.after(this.#o.retryMs ?? 1_000, () => {
      this.#retry = null;
      void this.#connect(true);
    });
  }

  /** Stops listening and closes the connection. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#retry?.cancel();
    this.#retry = null;
    const client = this.#client;
    this.#client = null;
    if (client) {
      client.removeAllListeners('end');
      await client.end();
    }
  }
}

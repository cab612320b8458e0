// Wake-ups of the webhook workers across the nodes of a cluster (PostgreSQL). Every node's gateway takes Linear's and
// GitHub's webhooks and commits each delivery to its queue table before answering 200, but the workers run only on the
// holder of their lease (`primary` for Linear, `github` for GitHub), and the intake wakes only its own process's worker.
// So the node that took a delivery announces it (`NOTIFY switchboard_webhooks, '<linear|github>'`, after the commit),
// and every node wakes its local workers on the notice, when the LISTEN connection comes back, and every `pollMs` (a
// lost notice only delays a delivery). A worker that is not running here ignores the wake-up.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { Notices } from '../core/notices.ts';
import { followChannel } from '../core/notices.ts';
import type { Database } from '../store/tables/index.ts';

/** The NOTIFY channel a committed webhook delivery is announced on (payload: its source). */
export const WEBHOOKS_CHANNEL = 'switchboard_webhooks';

/** Where a delivery came from. */
export type WebhookSource = 'linear' | 'github';

/** A webhook worker, by shape: `notify()` makes it look at its queue (a no-op while it does not run). */
export interface WakeableWorker {
  notify(): void;
}

/** How WebhookWakeups is built. */
export interface WebhookWakeupsOptions {
  db: Kysely<Database>;
  notices: Notices;
  /** This node's workers by source (absent: that integration is off). */
  workers: Partial<Record<WebhookSource, WakeableWorker>>;
  clock: Clock;
  logger: Logger;
  pollMs: number;
}

/** Announces the deliveries this node committed and wakes this node's workers for every node's. */
export class WebhookWakeups {
  readonly #o: WebhookWakeupsOptions;
  #stopFollowing: (() => void) | null = null;

  constructor(options: WebhookWakeupsOptions) {
    this.#o = options;
  }

  /** Listens for announcements and starts the poll. */
  start(): void {
    if (this.#stopFollowing) return;
    const { notices, clock, pollMs } = this.#o;
    const notice = (source: string): void => {
      if (source === 'linear' || source === 'github') this.#wake(source);
    };
    this.#stopFollowing = followChannel(
      notices,
      WEBHOOKS_CHANNEL,
      { notice, all: () => this.#wakeAll() },
      clock,
      pollMs,
    );
  }

  /** Stops listening and polling. */
  stop(): void {
    this.#stopFollowing?.();
    this.#stopFollowing = null;
  }

  /**
   * Announces a delivery of `source` this node committed (call after its 200); wakes the local worker at once too.
   * A failed NOTIFY is logged: the holder's poll finds the delivery.
   */
  announce(source: WebhookSource): void {
    this.#wake(source);
    sql`SELECT pg_notify(${WEBHOOKS_CHANNEL}, ${source})`
      .execute(this.#o.db)
      .catch((error: unknown) =>
        this.#o.logger.warn({ err: error, source }, 'could not announce a webhook delivery; the holder polls for it'),
      );
  }

  #wake(source: WebhookSource): void {
    this.#o.workers[source]?.notify();
  }

  #wakeAll(): void {
    this.#wake('linear');
    this.#wake('github');
  }
}

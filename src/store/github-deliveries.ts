// The durable record of GitHub webhook deliveries: the dedup set (an `X-GitHub-Delivery` id is stored once) and the
// queue the webhook worker drains (pending → processing → done | dead; a crash leaves `processing`, recovered at start).
import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/** A verified delivery, as the intake stores it. */
export interface NewGithubDelivery {
  deliveryId: string;
  /** `X-GitHub-Event` (`pull_request_review`, `issue_comment`, …). */
  event: string;
  action: string | null;
  /** The raw JSON body. */
  payload: string;
  receivedAt: number;
}

/** A delivery as stored. */
export interface StoredGithubDelivery extends NewGithubDelivery {
  status: Database['github_webhook_deliveries']['status'];
  attempts: number;
  outcome: string | null;
  error: string | null;
}

type Row = Database['github_webhook_deliveries'];

function toDelivery(row: Row): StoredGithubDelivery {
  return {
    deliveryId: row.delivery_id,
    event: row.event,
    action: row.action,
    payload: row.payload,
    receivedAt: Number(row.received_at),
    status: row.status,
    attempts: Number(row.attempts),
    outcome: row.outcome,
    error: row.error,
  };
}

/** The `github_webhook_deliveries` table. Every method resolves after its commit. */
export class GithubDeliveryStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Stores a delivery as pending, due now; resolves false (and changes nothing) when its id is known already. */
  async enqueue(d: NewGithubDelivery): Promise<boolean> {
    const result = await this.#db
      .insertInto('github_webhook_deliveries')
      .values({
        delivery_id: d.deliveryId,
        event: d.event,
        action: d.action,
        payload: d.payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: d.receivedAt,
        outcome: null,
        error: null,
        received_at: d.receivedAt,
        updated_at: d.receivedAt,
      })
      .onConflict((oc) => oc.column('delivery_id').doNothing())
      .returning('delivery_id')
      .executeTakeFirst();
    return result !== undefined;
  }

  /** Puts deliveries a previous process left `processing` back to pending; resolves how many. */
  async recoverInterrupted(now: number): Promise<number> {
    const result = await this.#db
      .updateTable('github_webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: now, updated_at: now })
      .where('status', '=', 'processing')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Claims the oldest due pending delivery (marks it processing, counts the attempt); undefined when none is due. */
  async claimNext(now: number): Promise<StoredGithubDelivery | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('github_webhook_deliveries')
        .selectAll()
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .orderBy('received_at')
        .orderBy('delivery_id')
        .limit(1)
        .executeTakeFirst();
      if (!row) return undefined;
      const attempts = Number(row.attempts) + 1;
      await trx
        .updateTable('github_webhook_deliveries')
        .set({ status: 'processing', attempts, updated_at: now })
        .where('delivery_id', '=', row.delivery_id)
        .execute();
      return toDelivery({ ...row, status: 'processing', attempts });
    });
  }

  /** The earliest retry time among pending deliveries after `now`, if any. */
  async nextDueAfter(now: number): Promise<number | undefined> {
    const row = await this.#db
      .selectFrom('github_webhook_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('due'))
      .where('status', '=', 'pending')
      .where('next_attempt_at', '>', now)
      .executeTakeFirst();
    return row?.due === null || row?.due === undefined ? undefined : Number(row.due);
  }

  /** Marks a claimed delivery done with what became of it. */
  async complete(deliveryId: string, outcome: string, now: number): Promise<void> {
    await this.#db
      .updateTable('github_webhook_deliveries')
      .set({ status: 'done', outcome, error: null, updated_at: now })
      .where('delivery_id', '=', deliveryId)
      .execute();
  }

  /** Records a failed attempt: pending again at `retryAt`, or dead when `retryAt` is null. */
  async fail(deliveryId: string, error: string, now: number, retryAt: number | null): Promise<void> {
    await this.#db
      .updateTable('github_webhook_deliveries')
      .set(
        retryAt === null
          ? { status: 'dead', error, updated_at: now }
          : { status: 'pending', error, next_attempt_at: retryAt, updated_at: now },
      )
      .where('delivery_id', '=', deliveryId)
      .execute();
  }

  /** Deletes finished (done or dead) deliveries last touched before `before`; resolves how many. */
  async prune(before: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('github_webhook_deliveries')
      .where('status', 'in', ['done', 'dead'])
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** One delivery by id. */
  async get(deliveryId: string): Promise<StoredGithubDelivery | undefined> {
    const row = await this.#db
      .selectFrom('github_webhook_deliveries')
      .selectAll()
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirst();
    return row ? toDelivery(row) : undefined;
  }

  /** Every delivery, oldest first (tests, diagnostics). */
  async all(): Promise<StoredGithubDelivery[]> {
    const rows = await this.#db
      .selectFrom('github_webhook_deliveries')
      .selectAll()
      .orderBy('received_at')
      .orderBy('delivery_id')
      .execute();
    return rows.map(toDelivery);
  }
}

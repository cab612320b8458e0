// The upkeep of the Linear deliveries' table, for the operator and the status page: one delivery by id, the count in
// each status, the dead letters and their retry, and the pruning of finished deliveries.
import type { Kysely } from 'kysely';
import { toDelivery } from './linear-delivery-rows.ts';
import type { DeliveryStatus, StoredDelivery } from './linear-delivery-types.ts';
import type { Database } from './tables/index.ts';

/** Lookups, counts, dead letters and pruning of the deliveries. Every method resolves after its commit. */
export class DeliveryMaintenance {
  readonly #db: Kysely<Database>;

  /** The upkeep over `db`. */
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** One delivery by id. */
  async get(deliveryId: string): Promise<StoredDelivery | undefined> {
    const row = await this.#db
      .selectFrom('linear_webhook_deliveries')
      .selectAll()
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirst();
    return row ? toDelivery(row) : undefined;
  }

  /** Number of deliveries in each state. */
  async counts(): Promise<Record<DeliveryStatus, number>> {
    const out: Record<DeliveryStatus, number> = { pending: 0, processing: 0, done: 0, dead: 0 };
    const rows = await this.#db
      .selectFrom('linear_webhook_deliveries')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    for (const row of rows) out[row.status] = Number(row.n);
    return out;
  }

  /** Dead-lettered deliveries, newest first. */
  async deadLetters(limit = 50): Promise<StoredDelivery[]> {
    const rows = await this.#db
      .selectFrom('linear_webhook_deliveries')
      .selectAll()
      .where('status', '=', 'dead')
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toDelivery);
  }

  /** Puts a dead delivery back in the queue with a fresh attempt count; false when it is not dead. */
  async retryDead(deliveryId: string, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('linear_webhook_deliveries')
      .set({ status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now })
      .where('delivery_id', '=', deliveryId)
      .where('status', '=', 'dead')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Deletes finished (done or dead) deliveries last touched before `before`; resolves how many. */
  async prune(before: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('linear_webhook_deliveries')
      .where('status', 'in', ['done', 'dead'])
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

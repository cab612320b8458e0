// The intake's writes of Linear webhook deliveries: the guarded INSERT of one new delivery, the read of which of a
// group's ids and digests are known, and the one multi-row INSERT of a group's new deliveries (one commit per group).
import type { ExpressionBuilder, Kysely } from 'kysely';
import { sql } from 'kysely';
import type { SlotOf } from './hot-statements.ts';
import { HotStatements } from './hot-statements.ts';
import { PENDING } from './linear-delivery-rows.ts';
import type { NewDelivery } from './linear-delivery-types.ts';
import type { Database } from './tables/index.ts';

/** The values of a new delivery's row that vary, in the order `deliveryInsert` takes them. */
function deliveryValues(d: NewDelivery): unknown[] {
  return [d.deliveryId, d.eventType, d.action, d.orderKey, d.payload, d.bodyDigest, d.receivedAt];
}

/** Values per delivery in `deliveryValues`. */
const DELIVERY_VALUES = 7;

/**
 * The intake's INSERT of `count` deliveries known to be new (slots: `deliveryValues` of each, one after the other),
 * pending and due at once; one a racing writer stored meanwhile is skipped.
 */
function deliveryGroupInsert(db: Kysely<Database>, count: number, slot: SlotOf) {
  const rows = Array.from({ length: count }, (_, i) => {
    const at = (n: number) => slot<number>(i * DELIVERY_VALUES + n);
    const received = at(6);
    return {
      delivery_id: slot<string>(i * DELIVERY_VALUES),
      event_type: slot<string>(i * DELIVERY_VALUES + 1),
      action: slot<string | null>(i * DELIVERY_VALUES + 2),
      order_key: slot<string>(i * DELIVERY_VALUES + 3),
      payload: slot<string>(i * DELIVERY_VALUES + 4),
      body_digest: slot<string>(i * DELIVERY_VALUES + 5),
      status: 'pending' as const,
      next_attempt_at: received,
      received_at: received,
      updated_at: received,
    };
  });
  return db
    .insertInto('linear_webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.doNothing());
}

/**
 * The intake's INSERT of one delivery (slots: see `deliveryValues`), pending and due at once. It inserts nothing when
 * the delivery id or the body digest is stored already: the guard is checked before a row is attempted, so such an
 * insert writes nothing at all (an attempted row, even one ON CONFLICT skips, makes SQLite's AUTOINCREMENT rewrite
 * sqlite_sequence, whose commit would cost a sync for no new row). ON CONFLICT still covers a race between two writers
 * (PostgreSQL). The times are cast so that PostgreSQL types the selected parameters as the columns' BIGINT.
 */
function deliveryInsert(db: Kysely<Database>, slot: SlotOf) {
  const deliveryId = slot<string>(0);
  const bodyDigest = slot<string>(5);
  const at = (eb: ExpressionBuilder<Database, never>) => eb.cast<number>(eb.val(slot<number>(6)), 'bigint');
  return db
    .insertInto('linear_webhook_deliveries')
    .columns([
      'delivery_id',
      'event_type',
      'action',
      'order_key',
      'payload',
      'body_digest',
      'status',
      'attempts',
      'next_attempt_at',
      'received_at',
      'updated_at',
    ])
    .expression(
      db
        .selectNoFrom((eb) => [
          eb.val(deliveryId).as('delivery_id'),
          eb.val(slot<string>(1)).as('event_type'),
          eb.val(slot<string | null>(2)).as('action'),
          eb.val(slot<string>(3)).as('order_key'),
          eb.val(slot<string>(4)).as('payload'),
          eb.val(bodyDigest).as('body_digest'),
          PENDING.as('status'),
          eb.cast<number>(sql.lit(0), 'bigint').as('attempts'),
          at(eb).as('next_attempt_at'),
          at(eb).as('received_at'),
          at(eb).as('updated_at'),
        ])
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('linear_webhook_deliveries as known')
                .select(sql.lit(1).as('one'))
                .where((k) => k.or([k('known.delivery_id', '=', deliveryId), k('known.body_digest', '=', bodyDigest)])),
            ),
          ),
        ),
    )
    .onConflict((oc) => oc.doNothing());
}

/** The intake's side of the deliveries: the dedup set and the queue's insert. Every method resolves after its commit. */
export class DeliveryIntake {
  readonly #db: Kysely<Database>;
  /** The intake's statements (per delivery), compiled once each. */
  readonly #hot = new HotStatements();

  /** The intake over `db`. */
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Stores a new delivery as pending, due now. Resolves false (and changes nothing) when its id or digest is known. */
  async enqueue(delivery: NewDelivery): Promise<boolean> {
    return (await this.enqueueMany([delivery]))[0] as boolean;
  }

  /**
   * Stores several deliveries in ONE commit (one sync for the whole group, so concurrent arrivals share it) and resolves
   * after it, per delivery, whether it was new; a repeated id or body digest (even within the group) is stored once.
   * Known deliveries write nothing (nothing to sync). The insert is an explicit transaction, committed at once: the
   * intake is its own group commit, so its writes do not wait for the end of the turn in SQLite's write group.
   */
  async enqueueMany(deliveries: readonly NewDelivery[]): Promise<boolean[]> {
    const insert = async (db: Kysely<Database>, d: NewDelivery): Promise<boolean> => {
      const result = await this.#hot.execute(db, 'insert', deliveryValues(d), (slot) => deliveryInsert(db, slot));
      return Number(result.numAffectedRows ?? 0n) === 1;
    };
    // One delivery is one statement, committed on its own (a redelivery's writes nothing, so its commit syncs nothing).
    const only = deliveries.length === 1 ? deliveries[0] : undefined;
    if (only) return [await this.#db.transaction().execute((trx) => insert(trx, only))];
    // A group first reads which of its ids and digests are known (one query), so that a group of redeliveries (Linear
    // retrying a burst) opens no transaction at all; the others are inserted, guarded as ever, in one transaction.
    // The rest (first of their id and digest within the group too) go in as ONE multi-row statement: one commit, one
    // statement however many arrived together. ON CONFLICT only matters for a writer racing us (PostgreSQL), and then
    // the delivery is stored either way: its answer says queued where it could have said duplicate, both a 200.
    const known = await this.#known(deliveries);
    const fresh = deliveries.map((d) => {
      const id = `id:${d.deliveryId}`;
      const digest = `digest:${d.bodyDigest}`;
      if (known.has(id) || known.has(digest)) return false;
      known.add(id).add(digest);
      return true;
    });
    const rows = deliveries.filter((_, i) => fresh[i]);
    if (rows.length === 0) return fresh;
    await this.#db
      .transaction()
      .execute((trx) =>
        this.#hot.execute(trx, `insert group:${rows.length}`, rows.flatMap(deliveryValues), (slot) =>
          deliveryGroupInsert(trx, rows.length, slot),
        ),
      );
    return fresh;
  }

  /** The delivery ids and body digests of `group` stored already, as `id:<id>` and `digest:<digest>`. */
  async #known(group: readonly NewDelivery[]): Promise<Set<string>> {
    const ids = group.map((d) => d.deliveryId);
    const digests = group.map((d) => d.bodyDigest);
    const rows = await this.#hot.rows(this.#db, `known:${group.length}`, [...ids, ...digests], (slot) =>
      this.#db
        .selectFrom('linear_webhook_deliveries')
        .select(['delivery_id', 'body_digest'])
        .where((eb) =>
          eb.or([
            eb(
              'delivery_id',
              'in',
              ids.map((_, i) => slot<string>(i)),
            ),
            eb(
              'body_digest',
              'in',
              digests.map((_, i) => slot<string>(ids.length + i)),
            ),
          ]),
        ),
    );
    return new Set(rows.flatMap((row) => [`id:${row.delivery_id}`, `digest:${row.body_digest ?? ''}`]));
  }
}

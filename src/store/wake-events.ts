import type { Kysely, Selectable } from 'kysely';
import { HotStatements } from './hot-statements.ts';
import type { Database } from './tables/index.ts';

/** What happened to a coding session that the orchestrator is told about. */
export type WakeEventKind = 'waiting' | 'ended' | 'interrupted';

/** `pending` until delivered; `undelivered` when no session could take it (logged and counted). */
export type WakeEventStatus = 'pending' | 'delivered' | 'undelivered';

/** How a delivered event found its session. */
export type WakeVia = 'origin' | 'most-recent-foreground' | 'heartbeat' | 'heartbeat-run';

/** One wake event in the outbox. */
export interface WakeEvent {
  id: number;
  /** Idempotency id given to the engine; the same on every attempt. */
  messageId: string;
  codingSessionId: string;
  kind: WakeEventKind;
  status: WakeEventStatus;
  originSessionId: string | null;
  text: string;
  targetSessionId: string | null;
  via: WakeVia | null;
  attempts: number;
  error: string | null;
  createdAt: number;
  settledAt: number | null;
}

function fromRow(r: Selectable<Database['wake_events']>): WakeEvent {
  return {
    id: r.id,
    messageId: r.message_id,
    codingSessionId: r.coding_session_id,
    kind: r.kind,
    status: r.status,
    originSessionId: r.origin_session_id,
    text: r.text,
    targetSessionId: r.target_session_id,
    via: r.via,
    attempts: r.attempts,
    error: r.error,
    createdAt: r.created_at,
    settledAt: r.settled_at,
  };
}

/**
 * The durable outbox of wake events: written when the session signals, settled when the engine accepted it. Every
 * method resolves once its statement committed.
 */
export class WakeEventStore {
  #db: Kysely<Database>;
  /** The statements run per wake event (insert, oldest pending, delivered, trim), built once each. */
  readonly #hot = new HotStatements();

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Stores a new pending event; resolves to it, or to null when an event with this message id is already stored. */
  async insert(input: {
    messageId: string;
    codingSessionId: string;
    kind: WakeEventKind;
    originSessionId: string | null;
    text: string;
    now: number;
  }): Promise<WakeEvent | null> {
    const values = [input.messageId, input.codingSessionId, input.kind, input.originSessionId, input.text, input.now];
    const [row] = await this.#hot.rows(this.#db, 'insert', values, (slot) =>
      this.#db
        .insertInto('wake_events')
        .values({
          message_id: slot<string>(0),
          coding_session_id: slot<string>(1),
          kind: slot<WakeEventKind>(2),
          status: 'pending',
          origin_session_id: slot<string | null>(3),
          text: slot<string>(4),
          created_at: slot<number>(5),
        })
        .onConflict((oc) => oc.column('message_id').doNothing())
        .returningAll(),
    );
    return row ? fromRow(row) : null;
  }

  /** One event by id. */
  async get(id: number): Promise<WakeEvent | undefined> {
    const row = await this.#db.selectFrom('wake_events').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  /** The oldest pending event (events are delivered in the order they happened). */
  async oldestPending(): Promise<WakeEvent | undefined> {
    const [row] = await this.#hot.rows(this.#db, 'oldest pending', [], () =>
      this.#db.selectFrom('wake_events').selectAll().where('status', '=', 'pending').orderBy('id').limit(1),
    );
    return row ? fromRow(row) : undefined;
  }

  /** Settles an event as accepted by `targetSessionId`, found `via` the route. */
  async markDelivered(id: number, targetSessionId: string, via: WakeVia, now: number): Promise<void> {
    await this.#hot.execute(this.#db, 'delivered', [targetSessionId, via, now, id], (slot) =>
      this.#db
        .updateTable('wake_events')
        .set((eb) => ({
          status: 'delivered',
          target_session_id: slot<string>(0),
          via: slot<WakeVia>(1),
          attempts: eb('attempts', '+', 1),
          error: null,
          settled_at: slot<number>(2),
        }))
        .where('id', '=', slot<number>(3)),
    );
  }

  /** Settles an event no session could take, with the reason. */
  async markUndelivered(id: number, reason: string, now: number): Promise<void> {
    await this.#db
      .updateTable('wake_events')
      .set((eb) => ({ status: 'undelivered', attempts: eb('attempts', '+', 1), error: reason, settled_at: now }))
      .where('id', '=', id)
      .execute();
  }

  /** A failed attempt: the event stays pending. */
  async recordFailure(id: number, error: string): Promise<void> {
    await this.#db
      .updateTable('wake_events')
      .set((eb) => ({ attempts: eb('attempts', '+', 1), error }))
      .where('id', '=', id)
      .execute();
  }

  /** Events by status, for the counters. */
  async counts(): Promise<Record<WakeEventStatus, number>> {
    const rows = await this.#db
      .selectFrom('wake_events')
      .select((eb) => ['status', eb.fn.countAll<number | string | bigint>().as('n')])
      .groupBy('status')
      .execute();
    const out: Record<WakeEventStatus, number> = { pending: 0, delivered: 0, undelivered: 0 };
    for (const r of rows) out[r.status] = Number(r.n);
    return out;
  }

  /** The newest events with a status, newest first. */
  async recent(status: WakeEventStatus, limit = 10): Promise<WakeEvent[]> {
    const rows = await this.#db
      .selectFrom('wake_events')
      .selectAll()
      .where('status', '=', status)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(fromRow);
  }

  /** Deletes settled events beyond the newest `keep`. */
  async trim(keep: number): Promise<void> {
    await this.#hot.execute(this.#db, 'trim', [keep], (slot) =>
      this.#db
        .deleteFrom('wake_events')
        .where('status', '!=', 'pending')
        .where('id', 'not in', (eb) =>
          eb
            .selectFrom('wake_events')
            .select('id')
            .where('status', '!=', 'pending')
            .orderBy('id', 'desc')
            .limit(slot<number>(0)),
        ),
    );
  }
}

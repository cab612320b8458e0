// The cluster's side of coding sessions (every row records its node): launches inserted `queued` in the order the
// nodes asked and cancelled while still queued, the sessions active per node, and the compare-and-swap by which one
// node takes over each session of a lost one.
import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { SessionRowStore } from './coding-session-row-store.ts';
import { patchColumns, sessionFromRow } from './coding-session-rows.ts';
import type { Placement, SessionPatch, StoredSession } from './coding-session-types.ts';
import { ACTIVE_STATUSES } from './coding-session-types.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';

/** Key of the advisory lock that hands out places in the launch queue one at a time (PostgreSQL). */
const QUEUE_SEQ_LOCK = 0x5b_0a_51;

/** Persistence of the coding sessions' nodes and of the launches queued for one. */
export class SessionNodeStore {
  readonly #db: Kysely<Database>;
  /** Inserts the rows (with their lookup keys) of queued launches. */
  readonly #rows: Pick<SessionRowStore, 'insertInTransaction'>;
  /** Called before each write to a session's row (the listing pages drop what it makes stale). */
  readonly #changed: (id: string) => void;
  /** True on PostgreSQL, where the nodes' enqueues take their places under an advisory lock. */
  readonly #shared: boolean;

  /** `rows` inserts the queued rows; `changed(id)` is called before each write to session `id`'s row. */
  constructor(db: Kysely<Database>, rows: Pick<SessionRowStore, 'insertInTransaction'>, changed: (id: string) => void) {
    this.#db = db;
    this.#rows = rows;
    this.#changed = changed;
    this.#shared = isShared(db);
  }

  /**
   * Inserts a launch that waits in the cluster's queue (status `queued`, no node yet) with where it may run; `also`
   * runs inside the same transaction (the NOTIFY that wakes the nodes, an idempotency key's answer). Resolves once
   * committed.
   */
  async insertQueued(
    session: StoredSession,
    placement: Placement,
    also?: (trx: Transaction<Database>) => Promise<void>,
  ): Promise<void> {
    await this.#rows.insertInTransaction(session, async (trx, insertRow) => {
      // Queued in order: the nodes' enqueues take the next place one at a time (SQLite writes one at a time anyway).
      if (this.#shared) await sql`SELECT pg_advisory_xact_lock(${QUEUE_SEQ_LOCK})`.execute(trx);
      await insertRow(placement);
      await trx
        .updateTable('coding_sessions')
        .set((eb) => ({
          queue_seq: eb
            .selectFrom('coding_sessions as q')
            .select((sub) => sub(sub.fn.coalesce(sub.fn.max('q.queue_seq'), sub.lit(0)), '+', sub.lit(1)).as('next')),
        }))
        .where('id', '=', session.id)
        .execute();
      await also?.(trx);
    });
  }

  /** Sessions starting or running per node (one grouped query), for `nodes` and placement. */
  async activeByNode(): Promise<Map<string, number>> {
    const rows = await this.#db
      .selectFrom('coding_sessions')
      .select((eb) => ['node', eb.fn.countAll<number>().as('n')])
      .where('status', 'in', ACTIVE_STATUSES)
      .where('node', 'is not', null)
      .groupBy('node')
      .execute();
    return new Map(rows.flatMap((r) => (r.node === null ? [] : [[r.node, Number(r.n)] as const])));
  }

  /** The sessions still starting or running on `node`, oldest first. */
  async activeOn(node: string): Promise<StoredSession[]> {
    const rows = await this.#db
      .selectFrom('coding_sessions')
      .selectAll()
      .where('node', '=', node)
      .where('status', 'in', ACTIVE_STATUSES)
      .orderBy('started_at')
      .orderBy('id')
      .execute();
    return rows.map(sessionFromRow);
  }

  /**
   * Applies `patch` to session `id` only if it is still starting or running on `node` (a compare-and-swap on the status
   * and the node: of two nodes taking over a lost one, one wins each session). `within`: inside that transaction. True
   * when it applied.
   */
  async patchIfActiveOn(id: string, node: string, patch: SessionPatch, within?: Kysely<Database>): Promise<boolean> {
    this.#changed(id);
    const result = await (within ?? this.#db)
      .updateTable('coding_sessions')
      .set(patchColumns(patch))
      .where('id', '=', id)
      .where('node', '=', node)
      .where('status', 'in', ACTIVE_STATUSES)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Cancels a queued launch (it never starts): `killed` with `reason`, only if still queued (a node may be claiming it).
   * Resolves with the final record, or null when it was no longer queued.
   */
  async cancelQueued(id: string, reason: string, now: number): Promise<StoredSession | null> {
    this.#changed(id);
    const row = await this.#db
      .updateTable('coding_sessions')
      .set({ status: 'killed', end_reason: reason, completed_at: now, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    return row ? sessionFromRow(row) : null;
  }
}

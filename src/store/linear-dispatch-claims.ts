// The queue and the cluster's claims on dispatches: which dispatches a node can run, the claim of the oldest queued
// one under the slot cap (serialized across the cluster on PostgreSQL, fenced on the node's incarnation), the release
// of a lost node's dispatches and their claim by another node, and a queued dispatch's place in the queue.
import type { ExpressionBuilder, Kysely } from 'kysely';
import { sql } from 'kysely';
import type { HarnessName } from '../core/config.ts';
import { byArrival, dispatchOf } from './linear-dispatch-rows.ts';
import type { Claimant, DispatchRecord } from './linear-dispatch-types.ts';
import { SLOT_STATUSES } from './linear-dispatch-types.ts';
import { memberServing } from './node-fence.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';

/** Key of the advisory lock that serializes the cluster's dispatch claims (PostgreSQL). */
const DISPATCH_CLAIM_LOCK = 0x5b_0a_d1;

/** True when `claimant` may claim inside `trx`: unfenced, or its row is `up` under its current incarnation. */
function mayClaim(trx: Kysely<Database>, claimant: Claimant | undefined): Promise<boolean> | boolean {
  if (!claimant?.incarnation) return true;
  return memberServing(trx, {
    node: claimant.node,
    incarnation: claimant.incarnation(),
    ...(claimant.idleTimeoutMs !== undefined ? { idleTimeoutMs: claimant.idleTimeoutMs } : {}),
  });
}

/**
 * The condition that a dispatch row is one `claimant` can run: its repository is a workspace root of the node or
 * under one (compared by prefix with the separator, in SQL both databases run), and its worker and audit harnesses are
 * the node's.
 */
export function runnableBy(eb: ExpressionBuilder<Database, 'linear_dispatches'>, claimant: Claimant) {
  const roots = claimant.workspaces.map((w) => w.replace(/\/+$/, '') || '/');
  if (roots.length === 0 || claimant.harnesses.length === 0) return eb.lit(false);
  const inRoot = roots.map((root) => {
    const prefix = root.endsWith('/') ? root : `${root}/`;
    return eb.or([
      eb('repo_path', '=', root),
      eb(eb.fn('substr', ['repo_path', eb.lit(1), eb.lit(prefix.length)]), '=', prefix),
    ]);
  });
  return eb.and([
    eb.or(inRoot),
    eb('harness', 'in', claimant.harnesses as HarnessName[]),
    eb('audit_harness', 'in', claimant.harnesses as HarnessName[]),
  ]);
}

/** The dispatches' queue and the nodes' claims on them. */
export class DispatchClaims {
  readonly #db: Kysely<Database>;

  /** Runs its statements (and the claims' transactions) on `db`. */
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Takes a slot for the oldest queued dispatch when fewer than `cap` dispatches hold one: queued → dispatched in
   * one statement (so two callers never both take the last slot). On PostgreSQL the cap is cluster-wide: the nodes'
   * claims are serialized by a transaction-scoped advisory lock, so each counts the slots after the one before
   * committed (READ COMMITTED alone would let a claim count from a snapshot older than another node's claim). A
   * claimant with an `incarnation` claims only while its node is up under it. Returns the dispatch, or null when none
   * moved.
   */
  async claimNextQueued(cap: number, now: number, claimant?: Claimant): Promise<DispatchRecord | null> {
    if (!isShared(this.#db) && !claimant?.incarnation) return this.#claimNextQueued(this.#db, cap, now, claimant);
    return this.#db.transaction().execute(async (trx) => {
      // The node's row first, then the claim lock (the same order in every claim, so no two claims wait on each other).
      if (!(await mayClaim(trx, claimant))) return null;
      if (isShared(trx)) await sql`SELECT pg_advisory_xact_lock(${DISPATCH_CLAIM_LOCK})`.execute(trx);
      return this.#claimNextQueued(trx, cap, now, claimant);
    });
  }

  async #claimNextQueued(
    db: Kysely<Database>,
    cap: number,
    now: number,
    claimant: Claimant | undefined,
  ): Promise<DispatchRecord | null> {
    const row = await db
      .updateTable('linear_dispatches')
      .set({ status: 'dispatched', updated_at: now, last_activity_at: now, node: claimant?.node ?? null })
      .where('status', '=', 'queued')
      .where((eb) =>
        eb.and([
          eb(
            'id',
            '=',
            eb
              .selectFrom('linear_dispatches')
              .select('id')
              .where('status', '=', 'queued')
              .$if(claimant !== undefined, (qb) => qb.where((w) => runnableBy(w, claimant as Claimant)))
              .orderBy('queue_seq')
              .orderBy('id')
              .limit(1),
          ),
          eb(
            eb
              .selectFrom('linear_dispatches')
              .select((sub) => sub.fn.countAll().as('n'))
              .where('status', 'in', SLOT_STATUSES),
            '<',
            cap,
          ),
        ]),
      )
      .returningAll()
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /**
   * Releases the unfinished dispatches a lost node owned (those holding a slot): their node is cleared (a
   * compare-and-swap on the node, so a second takeover releases nothing) and they keep their status and slot, for a
   * node that can run them to take (claimReleased). Returns the released dispatches.
   */
  async releaseNode(node: string, now: number): Promise<DispatchRecord[]> {
    const rows = await this.#db
      .updateTable('linear_dispatches')
      .set({ node: null, updated_at: now })
      .where('node', '=', node)
      .where('status', 'in', SLOT_STATUSES)
      .returningAll()
      .execute();
    return rows.map(dispatchOf);
  }

  /**
   * Takes the oldest released dispatch (holding a slot, no node) that `claimant` can run: its node is set in one
   * conditional UPDATE, so of the nodes asking at once exactly one gets it; fenced like claimNextQueued. Returns it,
   * or null when none is left (or the node may not claim).
   */
  async claimReleased(claimant: Claimant, now: number): Promise<DispatchRecord | null> {
    if (!claimant.incarnation) return this.#claimReleased(this.#db, claimant, now);
    return this.#db
      .transaction()
      .execute(async (trx) => ((await mayClaim(trx, claimant)) ? this.#claimReleased(trx, claimant, now) : null));
  }

  async #claimReleased(db: Kysely<Database>, claimant: Claimant, now: number): Promise<DispatchRecord | null> {
    const row = await db
      .updateTable('linear_dispatches')
      .set({ node: claimant.node, updated_at: now, last_activity_at: now })
      .where('node', 'is', null)
      .where('status', 'in', SLOT_STATUSES)
      .where((eb) =>
        eb(
          'id',
          '=',
          byArrival(
            eb
              .selectFrom('linear_dispatches')
              .selectAll()
              .where('node', 'is', null)
              .where('status', 'in', SLOT_STATUSES)
              .where((w) => runnableBy(w, claimant)),
          )
            .clearSelect()
            .select('id')
            .limit(1),
        ),
      )
      .returningAll()
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /** 1-based position of a queued dispatch in the queue, or null when it is not queued. */
  async queuePosition(id: string): Promise<number | null> {
    const row = await this.#db
      .selectFrom('linear_dispatches as d')
      .select((eb) =>
        eb
          .selectFrom('linear_dispatches as q')
          .select((sub) => sub.fn.countAll().as('n'))
          .where('q.status', '=', 'queued')
          .whereRef('q.queue_seq', '<=', 'd.queue_seq')
          .as('pos'),
      )
      .where('d.id', '=', id)
      .where('d.status', '=', 'queued')
      .executeTakeFirst();
    return row ? Number(row.pos) : null;
  }
}

// Fencing of the writes only the holder of a lease may make (the `primary` holder's engine records and outbox claims).
// A node stalled past its lease (a long pause, SIGSTOP) is declared down and its leases deleted at once; when it
// resumes, a write it had in flight must not commit. A fenced write runs its check first, in its own transaction: the
// lease row must still name this run (`incarnation`, fresh per run, so it is the fencing token) and, on PostgreSQL, it
// is read `FOR SHARE`, so a taker's `releaseAllOf` (a DELETE of that row) waits for the write to commit or sees it
// refused — never both the write and the takeover's rebuild missing it. On SQLite (a cluster of one) no fence is used.
// A holder frozen inside a fenced transaction (SIGSTOP) would keep that share lock, and the taker's release would wait
// for it, until it resumed: so the fence also sets `idle_in_transaction_session_timeout` for its transaction, and the
// server ends such a transaction (and its connection) within the node timeout. The resumed holder's write then fails
// (nothing acknowledged; the pool logs and replaces the connection), and its next beat finds the lease gone.
import type { RawBuilder, Transaction } from 'kysely';
import { sql } from 'kysely';
import { AppError } from '../core/errors.ts';
import type { Database } from './tables/index.ts';

/** Run first inside a write's transaction: resolves while the lease is held, throws `FencedError` otherwise. */
export type WriteFence = (trx: Transaction<Database>) => Promise<void>;

/** A write refused because this node no longer holds the lease guarding it (kind `unavailable`: retried elsewhere). */
export class FencedError extends AppError {
  /** The lease that was lost. */
  readonly lease: string;

  constructor(lease: string, node: string) {
    super('unavailable', `unavailable: node ${node} no longer holds the ${lease} lease (write refused)`);
    this.name = 'FencedError';
    this.lease = lease;
  }
}

/** True for an error a fence threw (the write must not be retried by this node). */
export function isFenced(error: unknown): error is FencedError {
  return error instanceof FencedError;
}

/** Default bound of a fenced transaction's idle time on the server (ms): half of the default `cluster.nodeTimeoutSec`. */
export const DEFAULT_FENCE_IDLE_MS = 7_500;

/** The bound of a fenced transaction's idle time for a cluster whose nodes time out after `nodeTimeoutSec`: half of it. */
export function fenceIdleMs(nodeTimeoutSec: number): number {
  return Math.max(1, Math.floor((nodeTimeoutSec * 1000) / 2));
}

/** How a lease fence is built. */
export interface LeaseFenceOptions {
  name: string;
  node: string;
  /** This run's incarnation, or a getter read at each check (it changes when the node rejoins). */
  incarnation: string | (() => string);
  /** Read the row `FOR SHARE` (PostgreSQL; SQLite has no row locks and needs none). */
  lock: boolean;
  /**
   * With `lock`: the transaction's `idle_in_transaction_session_timeout` (ms; `fenceIdleMs(cluster.nodeTimeoutSec)`,
   * default DEFAULT_FENCE_IDLE_MS), so the server ends a fenced transaction left idle by a frozen holder.
   */
  idleTimeoutMs?: number;
}

/**
 * A select-list expression that bounds the current transaction's idle time on the server to `ms`
 * (`set_config('idle_in_transaction_session_timeout', …, true)`: SET LOCAL, gone with the transaction). Select it with
 * the row a fenced transaction locks, so it is set in that same statement, once the lock is held. PostgreSQL only.
 */
export function boundIdleTransaction(ms: number): RawBuilder<string> {
  const value = String(Math.max(1, Math.round(ms)));
  return sql<string>`set_config('idle_in_transaction_session_timeout', ${value}, true)`;
}

/**
 * The fence of lease `name` for this run (`node`, `incarnation`). `incarnation` may be a getter, read at each check: a
 * node that rejoined the cluster holds its leases under a fresh incarnation, and its writes are fenced by that one (a
 * write of the run before, still in flight, is refused). Returns the check to run first in each fenced transaction;
 * with `lock` it also bounds how long the transaction may sit idle holding the row's share lock.
 */
export function leaseFence(options: LeaseFenceOptions): WriteFence {
  const { name, node, lock } = options;
  const current = options.incarnation;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_FENCE_IDLE_MS;
  return async (trx) => {
    const incarnation = typeof current === 'string' ? current : current();
    let query = trx
      .selectFrom('cluster_leases')
      .select('name')
      .where('name', '=', name)
      .where('holder', '=', node)
      .where('incarnation', '=', incarnation);
    // set_config(…, true) is SET LOCAL: it ends with the transaction. Evaluated for the locked row only, in the same
    // statement (no extra round trip); when there is no row the write is refused and rolled back anyway.
    if (lock) query = query.select(boundIdleTransaction(idleMs).as('idle_timeout')).forShare();
    const row = await query.executeTakeFirst();
    if (!row) throw new FencedError(name, node);
  };
}

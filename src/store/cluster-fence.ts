// Fencing of the writes only the holder of a lease may make (the `primary` holder's engine records and outbox claims).
// A node stalled past its lease (a long pause, SIGSTOP) is declared down and its leases deleted at once; when it
// resumes, a write it had in flight must not commit. A fenced write runs its check first, in its own transaction: the
// lease row must still name this run (`incarnation`, fresh per run, so it is the fencing token) and, on PostgreSQL, it
// is read `FOR SHARE`, so a taker's `releaseAllOf` (a DELETE of that row) waits for the write to commit or sees it
// refused — never both the write and the takeover's rebuild missing it. On SQLite (a cluster of one) no fence is used.
import type { Transaction } from 'kysely';
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

/**
 * The fence of lease `name` for this run (`node`, `incarnation`). `incarnation` may be a getter, read at each check: a
 * node that rejoined the cluster holds its leases under a fresh incarnation, and its writes are fenced by that one (a
 * write of the run before, still in flight, is refused). `lock`: read the row `FOR SHARE` (PostgreSQL; SQLite has no
 * row locks and needs none). Returns the check to run first in each fenced transaction.
 */
export function leaseFence(options: {
  name: string;
  node: string;
  incarnation: string | (() => string);
  lock: boolean;
}): WriteFence {
  const { name, node, lock } = options;
  const current = options.incarnation;
  return async (trx) => {
    const incarnation = typeof current === 'string' ? current : current();
    let query = trx
      .selectFrom('cluster_leases')
      .select('name')
      .where('name', '=', name)
      .where('holder', '=', node)
      .where('incarnation', '=', incarnation);
    if (lock) query = query.forShare();
    const row = await query.executeTakeFirst();
    if (!row) throw new FencedError(name, node);
  };
}

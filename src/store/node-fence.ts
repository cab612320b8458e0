// Fencing of the claims a node makes for itself (Linear dispatches): a node the others declared down while it ran (a
// long pause, SIGSTOP) must claim nothing until it rejoined, even in the moment before its own heartbeat notices. The
// check runs inside the claim's transaction: this node's `cluster_nodes` row must be `up` under this run's incarnation.
// On PostgreSQL the row is read `FOR SHARE`, so a node marking this one down (an UPDATE of the row) waits for a claim in
// flight, and its takeover then releases what the claim took; a claim after the mark sees `down` and takes nothing.
// That lock must not outlive a node frozen inside the claim (every other node's failure detection would wait on it):
// like the lease fence, the read bounds the transaction's idle time on the server.
import type { Kysely } from 'kysely';
import { boundIdleTransaction, DEFAULT_FENCE_IDLE_MS } from './cluster-fence.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';

/** Who claims: a node's name and this run's incarnation (null before the node joined: nothing may be claimed). */
export interface NodeMember {
  node: string;
  incarnation: string | null;
  /** PostgreSQL: the claim transaction's idle bound (ms; `fenceIdleMs(cluster.nodeTimeoutSec)`, default 7.5 s). */
  idleTimeoutMs?: number;
}

/**
 * True when `member`'s row is `up` under its incarnation, read inside `trx` (the claim's transaction; `FOR SHARE` on
 * PostgreSQL, so the row cannot be marked down before that transaction ends, and the transaction's idle time bounded).
 * False otherwise: claim nothing.
 */
export async function memberServing(trx: Kysely<Database>, member: NodeMember): Promise<boolean> {
  if (member.incarnation === null) return false;
  let query = trx
    .selectFrom('cluster_nodes')
    .select('name')
    .where('name', '=', member.node)
    .where('incarnation', '=', member.incarnation)
    .where('status', '=', 'up');
  if (isShared(trx))
    query = query
      .select(boundIdleTransaction(member.idleTimeoutMs ?? DEFAULT_FENCE_IDLE_MS).as('idle_timeout'))
      .forShare();
  return (await query.executeTakeFirst()) !== undefined;
}

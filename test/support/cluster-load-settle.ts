// The checks a mixed chaos run waits on before it counts (each throws what is still open, which a timed-out waitFor
// reports): the chat settled, the Linear deliveries processed, no session stranded on a node that is gone.
import type { ListedSession } from './cluster-load.ts';
import { clusterState, holderOf, listSessions } from './cluster-load.ts';
import { countTurns } from './cluster-load-chat.ts';
import type { ClusterRig } from './cluster-rig.ts';
import type { ChatBody } from './mock-openai-chat.ts';

/**
 * True once every token was asked of the model (or its turn was cut off before it was: `cutOffBeforeAsked` says whether
 * cut-off notices account for the tokens never asked), the engine on the holder is idle (a turn's reply is queued before
 * its session goes idle) and the outbox has nothing left to send; throws what is still open otherwise.
 */
export async function chatSettled(
  rig: ClusterRig,
  tokens: readonly string[],
  bodies: readonly ChatBody[],
  cutOffBeforeAsked: (unasked: readonly string[]) => boolean = () => false,
): Promise<true> {
  const turns = countTurns(bodies);
  const unasked = tokens.filter((t) => !turns.has(t));
  if (unasked.length > 0 && !cutOffBeforeAsked(unasked))
    throw new Error(`not asked yet: ${unasked.join(' ')}\n${await clusterState(rig)}`);
  const holder = await holderOf(rig, 'primary');
  const { sessions } = await rig
    .node(holder)
    .rpc<{ sessions: { state: string; queued: number }[] }>('engine.sessions', {});
  const busy = sessions.filter((s) => s.state !== 'idle' || s.queued > 0);
  if (busy.length > 0) throw new Error(`the engine is busy: ${JSON.stringify(busy)}`);
  const outbox = await rig.db
    .selectFrom('outbox_messages')
    .select(['id', 'status'])
    .where('status', 'in', ['pending', 'sending'])
    .execute();
  if (outbox.length > 0) throw new Error(`the outbox still sends: ${JSON.stringify(outbox)}`);
  return true;
}

/** A stored Linear delivery, as counted. */
export interface DeliveryRow {
  delivery_id: string;
  status: string;
  attempts: number;
}

/** Every stored Linear delivery once none is pending or processing; throws the open ones otherwise. */
export async function deliveriesSettled(rig: ClusterRig): Promise<DeliveryRow[]> {
  const rows = await rig.db
    .selectFrom('linear_webhook_deliveries')
    .select(['delivery_id', 'status', 'attempts', 'last_error', 'next_attempt_at'])
    .execute();
  const open = rows.filter((r) => r.status !== 'done' && r.status !== 'dead');
  if (open.length > 0) throw new Error(`still open: ${JSON.stringify(open)}\n${await clusterState(rig)}`);
  return rows;
}

/** Every session once none is starting or running on a node that is not running; throws the stranded ones otherwise. */
export async function sessionsSettled(rig: ClusterRig): Promise<ListedSession[]> {
  const all = await listSessions(rig);
  const up = new Set(rig.up());
  const stranded = all.filter((s) => ['starting', 'running'].includes(s.status) && !(s.node && up.has(s.node)));
  if (stranded.length > 0) throw new Error(`stranded: ${JSON.stringify(stranded)}`);
  return all;
}

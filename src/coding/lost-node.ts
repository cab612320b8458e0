// A node of the cluster was declared down: the sessions it ran are cut off with it. One of the nodes that take it over
// marks each `interrupted` (a compare-and-swap on the status and the node, so one taker wins each), together with the
// owed notice row the restore uses, so the chat and the orchestrator are told exactly once.
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { RestartNoticeStore } from '../store/restart-notices.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { PermissionGate } from './permission-gate.ts';

/** What interrupting a lost node's sessions needs. */
export interface LostNodeDeps {
  store: CodingSessionStore;
  logs: SessionLogs;
  clock: Clock;
  logger: Logger;
  notices?: RestartNoticeStore;
  permissions?: PermissionGate;
}

/** The end reason of a session whose node was lost. */
export function nodeLostReason(node: string): string {
  return `node ${node} lost`;
}

/**
 * Marks every session still starting or running on `node` interrupted ("node <name> lost"), each with its owed notice
 * in one transaction, and cancels their pending approvals. Idempotent (a second taker finds nothing to mark). Returns
 * the ids whose notice is owed (these and any an earlier taker or restore marked but did not announce): announce them,
 * then call `SessionManager.restartNoticesStored`. `spare`: sessions left as they are (live on the calling node, which
 * is `node` itself marking what it left behind when it rejoins the cluster).
 */
export async function interruptLostNode(
  deps: LostNodeDeps,
  node: string,
  spare?: (sessionId: string) => boolean,
): Promise<string[]> {
  const { store, logs, clock, logger, notices, permissions } = deps;
  const endReason = nodeLostReason(node);
  const marked: string[] = [];
  for (const record of await store.activeOn(node)) {
    if (spare?.(record.id)) continue;
    const now = clock.now();
    const patch = { status: 'interrupted', completedAt: now, updatedAt: now, endReason, pid: null } as const;
    let won = false;
    const mark = async (trx?: Parameters<CodingSessionStore['update']>[2]): Promise<boolean> => {
      won = await store.patchIfActiveOn(record.id, node, patch, trx);
      return won;
    };
    if (notices) await notices.markWithNotice(record.id, now, mark);
    else await mark();
    if (!won) continue;
    marked.push(record.id);
    // Its log was written on the lost node: this node's record continues the database's numbering.
    await logs.prepare(record.id);
    logs.write(record.id, { type: 'status', status: 'interrupted', endReason });
    await permissions?.cancelSession(record.id, `${endReason}; resume the session to be asked again`);
  }
  if (marked.length > 0) logger.warn({ node, sessions: marked }, `sessions interrupted: ${endReason}`);
  return notices ? await notices.pending() : marked;
}

// What the last run of the daemon left, restored before anything new is taken in: the coding sessions it left running
// are marked interrupted and announced once (to their chats, then to the orchestrator), and the approvals left pending
// are cancelled. The chat notices start here, before the announcements they send.
import type { ApprovalDesk } from '../approvals/desk.ts';
import type { SessionManager } from '../coding/session-manager.ts';
import { faultPoint } from '../core/fault.ts';
import type { WakeRouter } from '../engine/wake/wake-router.ts';
import type { ApprovalNotices } from '../notify/approval-notices.ts';
import type { NotificationRouter } from '../notify/notification-router.ts';

/**
 * Restores the sessions, starts the chat notices, cancels the approvals left pending (SQLite) and announces the
 * interrupted sessions, then starts the sessions' timers. A crash anywhere in between announces nothing twice at the
 * next start: each announcement is keyed per interruption, and the notice rows are cleared last.
 */
export async function restoreLastRun(deps: {
  dialect: 'sqlite' | 'postgres';
  coding: { sessions: SessionManager; approvals: ApprovalDesk };
  notices: { notifications: NotificationRouter; approvalNotices: ApprovalNotices };
  orchestrator: { wake: WakeRouter };
}): Promise<void> {
  const { sessions, approvals } = deps.coding;
  const { notifications, approvalNotices } = deps.notices;
  const { wake } = deps.orchestrator;
  const interrupted = await sessions.restore();
  notifications.start();
  approvalNotices.start();
  // Requests left pending by the previous process are cancelled (their agents are gone); their chat messages say so.
  // On PostgreSQL the restore cancels only this node's (other nodes' agents still wait for theirs).
  if (deps.dialect === 'sqlite') await approvals.cancelStale();
  // Both are keyed per interruption: after a crash in between, the next start stores neither twice.
  await notifications.announceInterrupted(interrupted);
  faultPoint('sessions.restore.after-notice');
  await wake.announceInterrupted(interrupted);
  faultPoint('sessions.restore.before-clear');
  await sessions.restartNoticesStored(interrupted);
  sessions.startTimers();
}

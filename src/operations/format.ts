import { formatDuration, truncate } from '../coding/format.ts';
import { toolUseLine } from '../coding/tool-summary.ts';
import type { SessionMetrics } from '../store/coding-session-runs.ts';
import type { SessionStatus } from '../store/coding-session-types.ts';
import type { SessionSummary } from './session-summary.ts';

export { formatDuration, truncate };

const STATUS_ICON: Record<SessionStatus, string> = {
  starting: '🟡',
  running: '🟢',
  completed: '✅',
  failed: '❌',
  killed: '⛔',
  interrupted: '⏸️',
  queued: '⏳',
};

/** The icon for a status. */
export function statusIcon(status: SessionStatus): string {
  return STATUS_ICON[status];
}

/** One session as a listing entry (several lines). */
export function formatSessionLine(s: SessionSummary): string {
  const view = s.foregroundChannels.length > 0 ? 'foreground' : 'background';
  const turns = s.multiTurn ? 'multi-turn' : 'single';
  const waiting = s.pendingPermission
    ? `, waiting for approval of ${s.pendingPermission.tool}`
    : s.waitingFor
      ? `, waiting (${s.waitingFor})`
      : '';
  const lines = [
    `${statusIcon(s.status)} ${s.name} [${s.id}] (${formatDuration(s.durationMs)}) — ${s.status}${waiting}, ${view}, ${turns}, ${s.harness}${s.node ? ` on ${s.node}` : ''}`,
    `   📁 ${s.workdir}`,
    `   📝 "${truncate(s.prompt, 80)}"`,
  ];
  if (s.pendingApproval)
    lines.push(
      `   🔐 ${truncate(s.pendingApproval.summary, 120)} — approval ${s.pendingApproval.id}: /approve ${s.pendingApproval.id} [session|always] or /deny ${s.pendingApproval.id} [why]`,
    );
  else if (s.pendingPermission)
    lines.push(
      `   🔐 ${toolUseLine(s.pendingPermission.tool, s.pendingPermission.input)} — reply yes to allow, anything else to deny`,
    );
  if (s.costUsd > 0) lines.push(`   💰 $${s.costUsd.toFixed(4)}`);
  if (s.backendSessionId) lines.push(`   🔗 ${s.harness} session: ${s.backendSessionId}`);
  if (s.resumedFrom) lines.push(`   ↩️  Resumed from: ${s.resumedFrom}${s.forked ? ' (forked)' : ''}`);
  if (s.error) lines.push(`   ⚠️ ${truncate(s.error, 200)}`);
  else if (s.endReason && s.status !== 'running') lines.push(`   ℹ️ ${s.endReason}`);
  return lines.join('\n');
}

/** A list of sessions, or a line saying there are none. */
export function formatSessionList(sessions: SessionSummary[], filter: string): string {
  if (sessions.length === 0) return filter === 'all' ? 'No sessions.' : `No ${filter} sessions.`;
  return sessions.map(formatSessionLine).join('\n\n');
}

/** The stats block. */
export function formatStats(m: SessionMetrics): string {
  const launched = m.totalLaunched;
  const avg = m.averageDurationMs > 0 ? formatDuration(m.averageDurationMs) : 'n/a';
  const s = m.sessionsByStatus;
  // The counts by status are of runs: a resume is a run of its own, so they add up to the launches and the resumes.
  const resumed = s.running + s.completed + s.failed + s.killed + s.interrupted - launched;
  const lines = [
    `📊 Sessions: ${launched} launched${resumed > 0 ? `, ${resumed} resumed` : ''} — 🟢 ${s.running} running, ✅ ${s.completed} completed, ❌ ${s.failed} failed, ⛔ ${s.killed} killed, ⏸️ ${s.interrupted} interrupted`,
    `⏱️ Average duration: ${avg}`,
    `💰 Total cost: $${m.totalCostUsd.toFixed(4)}`,
  ];
  const days = Object.entries(m.costPerDay).slice(-7);
  if (days.length > 0) lines.push(`📅 Cost per day: ${days.map(([d, c]) => `${d} $${c.toFixed(4)}`).join(', ')}`);
  if (m.mostExpensive) {
    lines.push(
      `🏆 Most expensive: ${m.mostExpensive.name} [${m.mostExpensive.id}] $${m.mostExpensive.costUsd.toFixed(4)} — "${truncate(m.mostExpensive.prompt, 60)}"`,
    );
  }
  return lines.join('\n');
}

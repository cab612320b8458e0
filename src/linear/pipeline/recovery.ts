// Bringing dispatches back on track: after a restart, on every monitor pass, and when a session slot frees up.
//
// Restart rule: a dispatch in `working` whose worker session was interrupted by the crash is RESUMED in place
// (SessionManager.resume: same coding session id, so the session map stays valid and no second worker starts; the
// agent keeps its conversation and is told the daemon restarted). A dispatch in `auditing` whose auditor was
// interrupted RE-RUNS the audit phase in a new read-only session (a half-done audit has no value and re-running it
// has no side effects). A phase whose session ended while nobody listened (e.g. a worker that finished just before
// the crash, with no audit started) is processed as if its end had just arrived. A phase that never got a session
// (crash between the status change and the launch, or a full session pool) is launched. Every step is a CAS on the
// dispatch status, so nothing runs twice and nothing accepted is lost.
import { errorMessage } from '../../core/errors.ts';
import { AppError } from '../../core/errors.ts';
import { isActiveStatus } from '../../store/coding-sessions.ts';
import type { StoredSession } from '../../store/coding-sessions.ts';
import { SLOT_STATUSES } from '../../store/linear-dispatches.ts';
import type { DispatchRecord, DispatchSession } from '../../store/linear-dispatches.ts';
import { handleSessionEnd, launchPhase, setupDispatch } from './phases.ts';
import { promptVars } from './prompt-vars.ts';
import { renderTemplate } from './prompts.ts';
import type { PipelineRuntime } from './runtime.ts';
import type { MonitorReport } from './types.ts';

/** What a reconcile pass did to one dispatch. */
export type ReconcileAction = 'setup' | 'launched' | 'resumed' | 'rerun' | 'ended' | 'none';

/** Brings one dispatch in `dispatched`, `working` or `auditing` back on track (rule above). Run it in the dispatch's chain. */
export async function reconcile(rt: PipelineRuntime, dispatchId: string): Promise<ReconcileAction> {
  const d = rt.store.get(dispatchId);
  if (!d) return 'none';
  if (d.status === 'dispatched') {
    await setupDispatch(rt, d.id);
    return 'setup';
  }
  if (d.status !== 'working' && d.status !== 'auditing') return 'none';
  const phase = d.status === 'working' ? 'worker' : 'audit';
  const row = rt.store.currentSession(d.id);
  if (!row || row.phase !== phase || row.attempt !== d.attempt) {
    await launchPhase(rt, d.id, phase, 1);
    return 'launched';
  }
  let record: StoredSession | null = null;
  try {
    record = rt.deps.sessions.get(row.sessionId);
  } catch {
    record = null;
  }
  if (!record) {
    await launchPhase(rt, d.id, phase, row.try);
    return 'launched';
  }
  if (isActiveStatus(record.status)) {
    if (!rt.isWatched(row.sessionId) && rt.deps.sessions.live(row.sessionId)) rt.watch(d, row.sessionId, phase);
    return 'none';
  }
  if (record.status === 'interrupted' && row.endCause === null) {
    if (phase === 'worker') return resumeWorker(rt, d, row);
    await rt.record(d, 'audit-rerun', { interruptedSession: row.sessionId });
    await launchPhase(rt, d.id, 'audit', row.try);
    return 'rerun';
  }
  await handleSessionEnd(rt, row.sessionId, { claim: false });
  return 'ended';
}

async function resumeWorker(rt: PipelineRuntime, d: DispatchRecord, row: DispatchSession): Promise<ReconcileAction> {
  const issue = await rt.deps.linear.getIssue(d.issueId);
  const prompts = await rt.prompts(d.repoPath);
  const prompt = renderTemplate(prompts.resume.worker, promptVars(d, issue, prompts, rt.pc));
  const fresh = rt.store.get(d.id);
  if (!fresh || fresh.status !== 'working' || fresh.attempt !== d.attempt) return 'none';
  try {
    rt.deps.sessions.resume(row.sessionId, { prompt });
  } catch (error) {
    if (error instanceof AppError && error.kind === 'limit') {
      rt.waitingForSlot.add(d.id);
      await rt.record(d, 'waiting-for-slot', { phase: 'worker', error: errorMessage(error) });
      return 'none';
    }
    await rt.record(d, 'worker-resume-failed', { sessionId: row.sessionId, error: errorMessage(error) });
    await launchPhase(rt, d.id, 'worker', row.try);
    return 'launched';
  }
  rt.waitingForSlot.delete(d.id);
  rt.watch(d, row.sessionId, 'worker');
  rt.touch(d.id, true);
  await rt.record(d, 'worker-resumed', { sessionId: row.sessionId });
  rt.thought(d, 'switchboard restarted while the worker was running; resuming it where it left off.');
  return 'resumed';
}

/** Marks a dispatch without activity for `staleAfterSec` as stuck, stopping its session. */
async function markStale(rt: PipelineRuntime, dispatchId: string, staleMs: number): Promise<boolean> {
  const d = rt.store.get(dispatchId);
  if (!d || !SLOT_STATUSES.includes(d.status) || rt.now() - d.lastActivityAt <= staleMs) return false;
  const hours = Math.round(staleMs / 360_000) / 10;
  const reason = `no activity for ${hours} h (staleAfterSec ${rt.pc.staleAfterSec})`;
  const next = rt.store.transition(d.id, d.status, 'stuck', rt.now(), { attempt: d.attempt, patch: { lastError: `stale: ${reason}` } });
  if (!next) return false;
  const row = rt.store.currentSession(d.id);
  if (row && rt.deps.sessions.live(row.sessionId)?.isActive) {
    rt.store.setEndCause(row.sessionId, 'stale');
    rt.unwatch(row.sessionId);
    try {
      rt.deps.sessions.kill(row.sessionId, 'stale Linear dispatch');
    } catch (error) {
      rt.deps.logger.warn({ err: errorMessage(error), session: row.sessionId }, 'could not kill a stale dispatch session');
    }
  }
  rt.waitingForSlot.delete(d.id);
  await rt.tellStuck(next, reason);
  await rt.release(d.id);
  rt.slotFreed();
  return true;
}

/**
 * One pass of the background monitor (no model calls): stale dispatches → stuck (and told); every other dispatch
 * holding a slot is reconciled (e.g. a worker that finished with no audit started → audit started); finished
 * dispatches older than `pruneAfterSec` are deleted. Dispatches with a step in progress are left alone.
 */
export async function monitorPass(rt: PipelineRuntime): Promise<MonitorReport> {
  const report: MonitorReport = { stale: [], reconciled: [], pruned: 0 };
  const staleMs = rt.pc.staleAfterSec * 1000;
  const now = rt.now();
  for (const d of rt.store.list(SLOT_STATUSES)) {
    if (rt.busy(d.id)) continue;
    if (now - d.lastActivityAt > staleMs) {
      let stale = false;
      await rt.serial(d.id, 'stale', async () => {
        stale = await markStale(rt, d.id, staleMs);
      });
      if (stale) report.stale.push(d.identifier);
      continue;
    }
    let action: ReconcileAction = 'none';
    await rt.serial(d.id, 'monitor', async () => {
      action = await reconcile(rt, d.id);
    });
    if (action !== 'none') report.reconciled.push(d.identifier);
  }
  report.pruned = rt.store.prune(now - rt.pc.pruneAfterSec * 1000);
  return report;
}

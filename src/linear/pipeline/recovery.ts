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
import { existsSync } from 'node:fs';
import type { SessionManager } from '../../coding/session-manager.ts';
import { AppError, errorMessage } from '../../core/errors.ts';
import type { StoredSession } from '../../store/coding-session-types.ts';
import { isActiveStatus } from '../../store/coding-session-types.ts';
import type { DispatchRecord, DispatchSession } from '../../store/linear-dispatch-types.ts';
import { SLOT_STATUSES } from '../../store/linear-dispatch-types.ts';
import type { DispatchLanes } from './dispatch-lanes.ts';
import type { DispatchReporter } from './dispatch-reporter.ts';
import { prepareWorktree, setupDispatch } from './dispatch-setup.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import type { PhaseDeps } from './phase-deps.ts';
import { markStuck, releaseDispatch } from './phase-deps.ts';
import { handleSessionEnd, launchPhase } from './phases.ts';
import { promptVars } from './prompt-vars.ts';
import { loadPrompts, renderTemplate } from './prompts.ts';
import type { SessionWatch } from './session-watch.ts';
import type { MonitorReport } from './types.ts';

/** What recovery uses: what the phases use, and the few calls beyond them (resume, kill, busy lanes, watched sessions). */
export interface RecoveryDeps extends PhaseDeps {
  sessions: Pick<SessionManager, 'launch' | 'get' | 'outputBlocks' | 'liveById' | 'resume' | 'kill'>;
  lanes: Pick<DispatchLanes, 'serial' | 'busy'>;
  reporter: Pick<
    DispatchReporter,
    'thought' | 'tell' | 'tellOnce' | 'tellStuck' | 'notifyDone' | 'linkSession' | 'close'
  >;
  watch: Pick<SessionWatch, 'watch' | 'unwatch' | 'touch' | 'tripOf' | 'isWatched'>;
  /** In a cluster: true for the dispatches this node owns (the monitor leaves the others to their nodes). */
  mine?: (d: DispatchRecord) => boolean;
}

/** What a reconcile pass did to one dispatch. */
export type ReconcileAction = 'setup' | 'launched' | 'resumed' | 'rerun' | 'ended' | 'none';

/** Brings one dispatch in `dispatched`, `working` or `auditing` back on track (rule above). Run it in the dispatch's chain. */
export async function reconcile(
  p: RecoveryDeps,
  dispatchId: string,
  why: 'restart' | 'takeover' = 'restart',
): Promise<ReconcileAction> {
  const d = await p.store.get(dispatchId);
  if (!d) return 'none';
  if (d.status === 'dispatched') {
    await setupDispatch(p, d.id);
    return 'setup';
  }
  if (d.status !== 'working' && d.status !== 'auditing') return 'none';
  const phase = d.status === 'working' ? 'worker' : 'audit';
  const row = await p.store.currentSession(d.id);
  if (!row || row.phase !== phase || row.attempt !== d.attempt) {
    await launchPhase(p, d.id, phase, 1);
    return 'launched';
  }
  let record: StoredSession | null;
  try {
    record = await p.sessions.get(row.sessionId);
  } catch {
    record = null;
  }
  if (!record) {
    await launchPhase(p, d.id, phase, row.try);
    return 'launched';
  }
  if (isActiveStatus(record.status)) {
    if (!p.watch.isWatched(row.sessionId) && p.sessions.liveById(row.sessionId)) p.watch.watch(d, row.sessionId, phase);
    return 'none';
  }
  if (record.status === 'interrupted' && row.endCause === null) {
    if (phase === 'worker') return resumeWorker(p, d, row, why);
    await p.journal.record(d, 'audit-rerun', { interruptedSession: row.sessionId });
    await launchPhase(p, d.id, 'audit', row.try);
    return 'rerun';
  }
  await handleSessionEnd(p, row.sessionId, { claim: false });
  return 'ended';
}

/**
 * A dispatch this node took over from a lost node (cluster): its worktree is made again from its branch when the old
 * one is not on this disk, then it is reconciled like after a restart (the interrupted worker resumed here, or
 * relaunched; an interrupted audit re-run). Nothing of what Linear was told before is told again (keyed effects).
 */
export async function takeOver(p: RecoveryDeps, dispatchId: string): Promise<ReconcileAction> {
  let d = await p.store.get(dispatchId);
  if (!d) return 'none';
  await p.journal.record(d, 'taken-over', { node: d.node, status: d.status });
  if (d.status !== 'dispatched' && (!d.worktreePath || !existsSync(d.worktreePath))) {
    try {
      const worktree = await prepareWorktree(p, d);
      d = (await p.store.update(d.id, { worktreePath: worktree.path }, p.clock.now())) ?? d;
      await p.journal.record(d, 'worktree-remade', { worktree: worktree.path, created: worktree.created });
    } catch (error) {
      await markStuck(p, d, `could not prepare the worktree on node ${d.node ?? '?'}: ${errorMessage(error)}`);
      return 'none';
    }
  }
  return reconcile(p, d.id, 'takeover');
}

async function resumeWorker(
  p: RecoveryDeps,
  d: DispatchRecord,
  row: DispatchSession,
  why: 'restart' | 'takeover',
): Promise<ReconcileAction> {
  const issue = await p.linear.getIssue(d.issueId);
  const prompts = await loadPrompts(d.repoPath);
  const prompt = renderTemplate(prompts.resume.worker, promptVars(d, issue, prompts, p.pc));
  const fresh = await p.store.get(d.id);
  if (!fresh || fresh.status !== 'working' || fresh.attempt !== d.attempt) return 'none';
  try {
    await p.sessions.resume(row.sessionId, { prompt });
  } catch (error) {
    if (error instanceof AppError && error.kind === 'limit') {
      p.slots.waitForSession(d.id);
      await p.journal.record(d, 'waiting-for-slot', { phase: 'worker', error: errorMessage(error) });
      return 'none';
    }
    await p.journal.record(d, 'worker-resume-failed', { sessionId: row.sessionId, error: errorMessage(error) });
    await launchPhase(p, d.id, 'worker', row.try);
    return 'launched';
  }
  p.slots.stopWaiting(d.id);
  p.watch.watch(d, row.sessionId, 'worker');
  await p.watch.touch(d.id, true);
  await p.journal.record(d, 'worker-resumed', { sessionId: row.sessionId });
  p.reporter.thought(
    d,
    why === 'takeover'
      ? `The node running the worker was lost; resuming it on node ${d.node ?? 'this node'} where it left off.`
      : 'switchboard restarted while the worker was running; resuming it where it left off.',
  );
  return 'resumed';
}

/** Marks a dispatch without activity for `staleAfterSec` as stuck, stopping its session. */
async function markStale(p: RecoveryDeps, dispatchId: string, staleMs: number): Promise<boolean> {
  const d = await p.store.get(dispatchId);
  if (!d || !SLOT_STATUSES.includes(d.status) || p.clock.now() - d.lastActivityAt <= staleMs) return false;
  const hours = Math.round(staleMs / 360_000) / 10;
  const reason = `no activity for ${hours} h (staleAfterSec ${p.pc.staleAfterSec})`;
  const next = await transitionDispatch(p.store, d.id, d.status, 'stuck', p.clock.now(), {
    attempt: d.attempt,
    patch: { lastError: `stale: ${reason}` },
  });
  if (!next) return false;
  const row = await p.store.currentSession(d.id);
  if (row && p.sessions.liveById(row.sessionId)?.isActive) {
    await p.store.setEndCause(row.sessionId, 'stale');
    p.watch.unwatch(row.sessionId);
    try {
      await p.sessions.kill(row.sessionId, 'stale Linear dispatch');
    } catch (error) {
      p.logger.warn({ err: errorMessage(error), session: row.sessionId }, 'could not kill a stale dispatch session');
    }
  }
  p.slots.stopWaiting(d.id);
  await p.reporter.tellStuck(next, reason);
  await releaseDispatch(p, d.id);
  return true;
}

/**
 * One pass of the background monitor (no model calls): stale dispatches → stuck (and told); every other dispatch
 * holding a slot is reconciled (e.g. a worker that finished with no audit started → audit started); finished
 * dispatches older than `pruneAfterSec` are deleted. Dispatches with a step in progress are left alone.
 */
export async function monitorPass(p: RecoveryDeps): Promise<MonitorReport> {
  const report: MonitorReport = { stale: [], reconciled: [], pruned: 0 };
  const staleMs = p.pc.staleAfterSec * 1000;
  const now = p.clock.now();
  for (const d of await p.store.list(SLOT_STATUSES)) {
    if (p.lanes.busy(d.id) || (p.mine && !p.mine(d))) continue;
    if (now - d.lastActivityAt > staleMs) {
      let stale = false;
      await p.lanes.serial(d.id, 'stale', async () => {
        stale = await markStale(p, d.id, staleMs);
      });
      if (stale) report.stale.push(d.identifier);
      continue;
    }
    let action: ReconcileAction = 'none';
    await p.lanes.serial(d.id, 'monitor', async () => {
      action = await reconcile(p, d.id);
    });
    if (action !== 'none') report.reconciled.push(d.identifier);
  }
  report.pruned = await p.store.prune(now - p.pc.pruneAfterSec * 1000);
  return report;
}

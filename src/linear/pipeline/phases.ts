// The phases of a dispatch: setup (worktree) → worker → audit → verdict (done, rework, stuck), and what follows a
// watchdog kill. Every function runs inside the dispatch's serial chain and re-reads the dispatch before acting;
// every status change is a compare-and-swap, so a stop, a duplicate event or a recovery pass never doubles a step.
import { join } from 'node:path';
import { AppError, errorMessage } from '../../core/errors.ts';
import type { StoredSession } from '../../store/coding-sessions.ts';
import { isActiveStatus } from '../../store/coding-sessions.ts';
import { ensureLines } from '../../store/artifact-files.ts';
import type { DispatchPhase, DispatchRecord, DispatchSession } from '../../store/linear-dispatches.ts';
import type { LinearIssue } from '../api/types.ts';
import { capTail, EXCLUDE_LINES } from './artifacts.ts';
import { auditPrompt, bullets, doneSummary, planText, promptVars, roundAttempt, workerPrompt } from './prompt-vars.ts';
import type { PipelineRuntime } from './runtime.ts';
import { parseVerdict } from './verdict.ts';
import type { Verdict } from './verdict.ts';
import { describeTrip } from '../../coding/session-watchdog.ts';
import { ensureWorktree } from './worktree.ts';

/** The auditor's answer to any permission request: it is read-only. */
export const AUDITOR_DENIAL =
  'No. You are the auditor: you may only read files and run read-only commands, never edit anything. Finish your audit and give your verdict.';

const STATUS_OF_PHASE: Record<DispatchPhase, 'working' | 'auditing'> = { worker: 'working', audit: 'auditing' };

/** The coding-session name of a phase: `eng-12-worker-2`. */
function sessionName(d: DispatchRecord, phase: DispatchPhase): string {
  const slug = d.identifier.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+/, '') || 'issue';
  return `${slug}-${phase}-${d.attempt}`.slice(0, 64);
}

/** Every text block a session wrote, joined. */
export function sessionOutput(rt: PipelineRuntime, record: StoredSession | null): string {
  if (!record) return '';
  return rt.deps.sessions
    .outputBlocks(record)
    .map((b) => b.text)
    .join('\n\n');
}

function storedSession(rt: PipelineRuntime, sessionId: string): StoredSession | null {
  try {
    return rt.deps.sessions.get(sessionId);
  } catch {
    return null;
  }
}

/** Moves a dispatch to `stuck` (from whatever active status it is in) and tells the user. */
export async function markStuck(rt: PipelineRuntime, d: DispatchRecord, reason: string): Promise<void> {
  const next = rt.store.transition(d.id, d.status, 'stuck', rt.now(), { attempt: d.attempt, patch: { lastError: reason } });
  if (!next) return;
  await rt.tellStuck(next, reason);
  await rt.release(d.id);
  rt.slotFreed();
}

/** Prepares the worktree of a `dispatched` dispatch, then starts its first worker. */
export async function setupDispatch(rt: PipelineRuntime, dispatchId: string): Promise<void> {
  let d = rt.store.get(dispatchId);
  if (!d || d.status !== 'dispatched') return;
  const { pc } = rt;
  let created = false;
  let base: string | null = null;
  try {
    const worktree = await ensureWorktree({
      repo: d.repoPath,
      branch: d.branch,
      root: pc.worktreeDir ?? join(d.repoPath, '.switchboard', 'worktrees'),
      remote: pc.remote,
      fetch: pc.fetchBeforeBranch,
      onWarning: (message) => rt.deps.logger.warn({ dispatch: d?.id }, message),
    });
    await ensureLines(worktree.excludeFile, EXCLUDE_LINES);
    created = worktree.created;
    base = worktree.base;
    d = rt.store.update(d.id, { worktreePath: worktree.path }, rt.now()) ?? d;
  } catch (error) {
    await markStuck(rt, d, `could not prepare the worktree: ${errorMessage(error)}`);
    return;
  }
  await rt.record(d, 'dispatched', {
    worktree: d.worktreePath,
    created,
    base,
    tier: d.tier,
    tierReason: d.tierReason,
    harness: d.harness,
    model: d.model,
    audit: { harness: d.auditHarness, model: d.auditModel },
  });
  const next = rt.store.transition(d.id, 'dispatched', 'working', rt.now());
  if (!next) return;
  const from = base ? `, new branch from ${base}` : created ? ', existing branch' : ', reusing its worktree';
  rt.thought(next, `Worktree ready: ${next.worktreePath} (branch ${next.branch}${from}). Starting the worker.`);
  await launchPhase(rt, next.id, 'worker', 1);
}

/**
 * Starts the worker or the auditor of the dispatch's current attempt as a coding session in its worktree, maps the
 * session to the dispatch and starts its watchdog. The worker runs with `workerPermissionMode`; the auditor runs
 * read-only (permissionMode `plan`: Claude's plan mode, Gemini's `default` approval mode, Codex's read-only sandbox).
 * When the coding-session pool is full the dispatch waits for a free slot (retried when any session ends).
 */
export async function launchPhase(rt: PipelineRuntime, dispatchId: string, phase: DispatchPhase, tryNo: number): Promise<void> {
  const expected = STATUS_OF_PHASE[phase];
  const d = rt.store.get(dispatchId);
  if (!d || d.status !== expected || !d.worktreePath) return;
  const issue = await rt.deps.linear.getIssue(d.issueId);
  let prompt: { system: string; task: string };
  try {
    const prompts = await rt.prompts(d.repoPath);
    if (phase === 'worker') {
      prompt = workerPrompt(prompts, promptVars(d, issue, prompts, rt.pc), (d.context.lastGaps ?? []).length > 0);
    } else {
      const workerReport = capTail(lastWorkerOutput(rt, d), rt.pc.promptInputMaxChars);
      prompt = auditPrompt(prompts, promptVars(d, issue, prompts, rt.pc, { workerReport }));
    }
  } catch (error) {
    await markStuck(rt, d, `invalid prompts: ${errorMessage(error)}`);
    return;
  }
  // The awaits above let a stop or another event through: act only if nothing changed.
  const fresh = rt.store.get(d.id);
  if (!fresh || fresh.status !== expected || fresh.attempt !== d.attempt) return;
  const { pc } = rt;
  let session;
  try {
    session = rt.deps.sessions.launch({
      prompt: prompt.task,
      systemPrompt: prompt.system,
      harness: phase === 'worker' ? d.harness : d.auditHarness,
      ...((phase === 'worker' ? d.model : d.auditModel) ? { model: (phase === 'worker' ? d.model : d.auditModel) as string } : {}),
      workdir: d.worktreePath,
      permissionMode: phase === 'worker' ? pc.workerPermissionMode : 'plan',
      ...(phase === 'audit' && pc.audit.allowedTools ? { allowedTools: pc.audit.allowedTools } : {}),
      multiTurn: false,
      name: sessionName(d, phase),
      originChannel: pc.originChannel,
      owner: 'linear-pipeline',
    });
  } catch (error) {
    if (error instanceof AppError && error.kind === 'limit') {
      if (!rt.waitingForSlot.has(d.id)) rt.thought(d, `Waiting for a free coding-session slot to start the ${phase}.`);
      rt.waitingForSlot.add(d.id);
      await rt.record(d, 'waiting-for-slot', { phase, error: errorMessage(error) });
      return;
    }
    await markStuck(rt, d, `could not start the ${phase}: ${errorMessage(error)}`);
    return;
  }
  rt.waitingForSlot.delete(d.id);
  rt.store.addSession({ sessionId: session.id, dispatchId: d.id, phase, attempt: d.attempt, try: tryNo, startedAt: rt.now() });
  rt.watch(d, session.id, phase);
  rt.touch(d.id, true);
  // A session that could not even start has already ended (before it was mapped): handle that end now.
  if (!session.isActive) void rt.serial(d.id, 'session-end', () => handleSessionEnd(rt, session.id, { claim: true }));
  const harness = phase === 'worker' ? d.harness : d.auditHarness;
  const model = (phase === 'worker' ? d.model : d.auditModel) ?? 'default model';
  if (phase === 'worker') await rt.artifacts(d)?.plan(planText(d, prompt.system, prompt.task)).catch((e: unknown) => rt.deps.logger.error({ err: e }, 'could not write plan.md'));
  await rt.record(d, `${phase}-started`, { sessionId: session.id, try: tryNo, harness, model });
  await rt.linkSession(d, session.id);
  const retry = tryNo > 1 ? ' (retry after a watchdog kill)' : '';
  rt.thought(
    d,
    phase === 'worker'
      ? `Worker started: attempt ${roundAttempt(d)} of ${pc.maxAttempts}${retry}, ${harness} ${model}.`
      : `Independent audit started: read-only ${harness} ${model} session${retry}.`,
  );
}

/** The output of the newest worker session of the dispatch's current attempt. */
function lastWorkerOutput(rt: PipelineRuntime, d: DispatchRecord): string {
  const worker = rt.store
    .sessions(d.id)
    .filter((s) => s.phase === 'worker' && s.attempt === d.attempt)
    .at(-1);
  return worker ? sessionOutput(rt, storedSession(rt, worker.sessionId)) : '';
}

/**
 * What follows the end of a mapped session. With `claim`, only the first caller for a session acts (the signal
 * path); recovery passes `claim: false` and relies on the status checks. Ends of superseded sessions (an older try or
 * attempt) and of sessions the pipeline stopped itself are ignored.
 */
export async function handleSessionEnd(rt: PipelineRuntime, sessionId: string, options: { claim: boolean }): Promise<void> {
  const row = rt.store.session(sessionId);
  if (!row) return;
  rt.unwatch(sessionId);
  const claimed = rt.store.closeSession(sessionId, rt.now());
  if (options.claim && !claimed) return;
  const d = rt.store.get(row.dispatchId);
  if (!d || rt.store.currentSession(d.id)?.sessionId !== sessionId) return;
  if (d.status !== STATUS_OF_PHASE[row.phase] || d.attempt !== row.attempt) return;
  if (row.endCause === 'stop' || row.endCause === 'stale') return;
  const record = storedSession(rt, sessionId);
  if (record && isActiveStatus(record.status)) return;
  if (row.endCause === 'watchdog') await afterWatchdogKill(rt, d, row, record);
  else if (row.phase === 'worker') await afterWorker(rt, d, row, record);
  else await afterAudit(rt, d, row, record);
}

async function afterWorker(rt: PipelineRuntime, d: DispatchRecord, row: DispatchSession, record: StoredSession | null): Promise<void> {
  const output = sessionOutput(rt, record);
  await rt.artifacts(d)?.workerOutput(row.attempt, output).catch((e: unknown) => rt.deps.logger.error({ err: e }, 'could not write the worker output'));
  await rt.record(d, 'worker-ended', { sessionId: row.sessionId, try: row.try, sessionStatus: record?.status ?? 'unknown', error: record?.error ?? null, costUsd: record?.costUsd ?? 0 });
  if (record?.status === 'failed') rt.thought(d, `The worker ended with an error (${record.error ?? 'unknown'}); the auditor will check what it did.`);
  const next = rt.store.transition(d.id, 'working', 'auditing', rt.now(), { attempt: d.attempt });
  if (!next) return;
  await launchPhase(rt, next.id, 'audit', 1);
}

async function afterAudit(rt: PipelineRuntime, d: DispatchRecord, row: DispatchSession, record: StoredSession | null): Promise<void> {
  const verdict: Verdict = parseVerdict(sessionOutput(rt, record));
  if (!verdict.parsed && record?.status === 'failed') verdict.gaps.push(`The auditor session failed: ${record.error ?? 'unknown error'}`);
  await rt
    .artifacts(d)
    ?.audit(row.attempt, verdict, { sessionId: row.sessionId, sessionStatus: record?.status ?? 'unknown', try: row.try })
    .catch((e: unknown) => rt.deps.logger.error({ err: e }, 'could not write the audit verdict'));
  await rt.record(d, 'audit-ended', { sessionId: row.sessionId, pass: verdict.pass, parsed: verdict.parsed, gaps: verdict.gaps });
  const { maxAttempts } = rt.pc;
  const used = roundAttempt(d);
  if (verdict.pass) {
    const next = rt.store.transition(d.id, 'auditing', 'done', rt.now(), {
      attempt: d.attempt,
      patch: { lastError: null, context: { ...d.context, lastGaps: [] } },
    });
    if (next) await finishDone(rt, next, verdict);
    return;
  }
  if (used < maxAttempts) {
    const next = rt.store.transition(d.id, 'auditing', 'working', rt.now(), {
      attempt: d.attempt,
      patch: { attempt: d.attempt + 1, context: { ...d.context, lastGaps: verdict.gaps } },
    });
    if (!next) return;
    rt.thought(next, `The audit of attempt ${used} failed. Gaps:\n${bullets(verdict.gaps)}\nStarting attempt ${used + 1} of ${maxAttempts} with them.`);
    await rt.record(next, 'rework', { gaps: verdict.gaps });
    await launchPhase(rt, next.id, 'worker', 1);
    return;
  }
  const next = rt.store.transition(d.id, 'auditing', 'stuck', rt.now(), {
    attempt: d.attempt,
    patch: { lastError: `audit failed ${used} times`, context: { ...d.context, lastGaps: verdict.gaps } },
  });
  if (!next) return;
  await rt.tellStuck(next, `the audit failed ${used} time${used === 1 ? '' : 's'} (maxAttempts ${maxAttempts}). Open gaps:\n${bullets(verdict.gaps)}`);
  await rt.release(d.id);
  rt.slotFreed();
}

async function afterWatchdogKill(rt: PipelineRuntime, d: DispatchRecord, row: DispatchSession, record: StoredSession | null): Promise<void> {
  const trip = rt.tripOf(row.sessionId);
  const reason = trip ? describeTrip(trip) : (record?.endReason ?? 'killed by the watchdog');
  const output = sessionOutput(rt, record);
  await rt.record(d, 'watchdog-kill', { phase: row.phase, sessionId: row.sessionId, try: row.try, reason, outputTail: capTail(output, 2_048) });
  if (row.phase === 'worker') await rt.artifacts(d)?.workerOutput(row.attempt, output).catch((e: unknown) => rt.deps.logger.error({ err: e }, 'could not write the worker output'));
  const who = row.phase === 'worker' ? 'worker' : 'auditor';
  if (row.try < 2) {
    await rt.tell(d, { type: 'action', action: 'Watchdog', parameter: `killed the ${who} (${reason}); retrying once`, result: 'retrying' });
    await launchPhase(rt, d.id, row.phase, row.try + 1);
    return;
  }
  await markStuck(rt, d, `the watchdog killed the ${who} twice (last: ${reason}).`);
}

/** Records the pass, posts the one summary response, and moves the issue to a completed workflow state. */
async function finishDone(rt: PipelineRuntime, d: DispatchRecord, verdict: Verdict): Promise<void> {
  const summary = doneSummary(d, verdict, lastWorkerOutput(rt, d));
  await rt.artifacts(d)?.summary(summary).catch((e: unknown) => rt.deps.logger.error({ err: e }, 'could not write summary.md'));
  await rt.record(d, 'done', { criteria: verdict.criteria, testResults: verdict.testResults });
  await rt.tell(d, { type: 'response', body: summary });
  await rt.notifyDone(d, verdict);
  try {
    const state = await completeIssue(rt, await rt.deps.linear.getIssue(d.issueId));
    await rt.record(d, 'issue-completed', { state });
  } catch (error) {
    await rt.record(d, 'issue-complete-failed', { error: errorMessage(error) });
  }
  await rt.release(d.id);
  rt.slotFreed();
}

/** Moves an issue to its team's completed state ("Done" when there is one); returns the state's name. */
async function completeIssue(rt: PipelineRuntime, issue: LinearIssue): Promise<string | null> {
  if (issue.state?.type === 'completed') return issue.state.name;
  const states = (await rt.deps.linear.teamStates(issue.team.id)).filter((s) => s.type === 'completed');
  const target = states.find((s) => /^done$/i.test(s.name)) ?? states[0];
  if (!target) return null;
  await rt.deps.linear.updateIssue(issue.id, { stateId: target.id });
  return target.name;
}

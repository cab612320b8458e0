// The phases of a dispatch after its setup (dispatch-setup.ts): worker → audit → verdict (done or a pull request in
// audit-pass.ts, rework, stuck), and what follows a watchdog kill. Every function runs inside the dispatch's serial
// chain and re-reads the dispatch before acting; every status change is a compare-and-swap, so a stop, a duplicate
// event or a recovery pass never doubles a step. Each phase is handed PhaseDeps (phase-deps.ts).
import { describeTrip } from '../../coding/session-watchdog.ts';
import { AppError, errorMessage } from '../../core/errors.ts';
import type { StoredSession } from '../../store/coding-session-types.ts';
import { isActiveStatus } from '../../store/coding-session-types.ts';
import type { DispatchPhase, DispatchRecord, DispatchSession } from '../../store/linear-dispatch-types.ts';
import { capTail } from './artifacts.ts';
import { finishDone, passWithPullRequest } from './audit-pass.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import type { PhaseDeps } from './phase-deps.ts';
import { markStuck, releaseDispatch } from './phase-deps.ts';
import { auditPrompt, bullets, planText, promptVars, roundAttempt, workerPrompt } from './prompt-vars.ts';
import { loadPrompts } from './prompts.ts';
import { lastWorkerOutput, sessionOutput, storedSession } from './session-output.ts';
import type { Verdict } from './verdict.ts';
import { parseVerdict } from './verdict.ts';

/** The auditor's answer to any permission request: it is read-only. */
export const AUDITOR_DENIAL =
  'No. You are the auditor: you may only read files and run read-only commands, never edit anything. Finish your audit and give your verdict.';

const STATUS_OF_PHASE: Record<DispatchPhase, 'working' | 'auditing'> = { worker: 'working', audit: 'auditing' };

/** The coding-session name of a phase: `eng-12-worker-2`. */
function sessionName(d: DispatchRecord, phase: DispatchPhase): string {
  const slug =
    d.identifier
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '') || 'issue';
  return `${slug}-${phase}-${d.attempt}`.slice(0, 64);
}

/**
 * Starts the worker or the auditor of the dispatch's current attempt as a coding session in its worktree, maps the
 * session to the dispatch and starts its watchdog. The worker runs with `workerPermissionMode`; the auditor runs
 * read-only (permissionMode `plan`: Claude's plan mode, Gemini's `default` approval mode, Codex's read-only sandbox).
 * When the coding-session pool is full the dispatch waits for a free slot (retried when any session ends).
 */
export async function launchPhase(
  p: PhaseDeps,
  dispatchId: string,
  phase: DispatchPhase,
  tryNo: number,
): Promise<void> {
  const expected = STATUS_OF_PHASE[phase];
  const d = await p.store.get(dispatchId);
  if (!d || d.status !== expected || !d.worktreePath) return;
  const issue = await p.linear.getIssue(d.issueId);
  let prompt: { system: string; task: string };
  try {
    const prompts = await loadPrompts(d.repoPath);
    if (phase === 'worker') {
      prompt = workerPrompt(prompts, promptVars(d, issue, prompts, p.pc), (d.context.lastGaps ?? []).length > 0);
    } else {
      const workerReport = capTail(await lastWorkerOutput(p, d), p.pc.promptInputMaxChars);
      prompt = auditPrompt(prompts, promptVars(d, issue, prompts, p.pc, { workerReport }));
    }
  } catch (error) {
    await markStuck(p, d, `invalid prompts: ${errorMessage(error)}`);
    return;
  }
  // The awaits above let a stop or another event through: act only if nothing changed.
  const fresh = await p.store.get(d.id);
  if (!fresh || fresh.status !== expected || fresh.attempt !== d.attempt) return;
  const { pc } = p;
  let session;
  try {
    session = await p.sessions.launch({
      prompt: prompt.task,
      systemPrompt: prompt.system,
      harness: phase === 'worker' ? d.harness : d.auditHarness,
      ...((phase === 'worker' ? d.model : d.auditModel)
        ? { model: (phase === 'worker' ? d.model : d.auditModel) as string }
        : {}),
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
      if (p.slots.waitForSession(d.id))
        p.reporter.thought(d, `Waiting for a free coding-session slot to start the ${phase}.`);
      await p.journal.record(d, 'waiting-for-slot', { phase, error: errorMessage(error) });
      return;
    }
    await markStuck(p, d, `could not start the ${phase}: ${errorMessage(error)}`);
    return;
  }
  p.slots.stopWaiting(d.id);
  await p.store.addSession({
    sessionId: session.id,
    dispatchId: d.id,
    phase,
    attempt: d.attempt,
    try: tryNo,
    startedAt: p.clock.now(),
  });
  p.watch.watch(d, session.id, phase);
  // A request the worker made before it was mapped to the dispatch goes to Linear now.
  if (phase === 'worker') p.approvals?.workerStarted(session.id);
  await p.watch.touch(d.id, true);
  // A session that could not even start has already ended (before it was mapped): handle that end now.
  if (!session.isActive)
    void p.lanes.serial(d.id, 'session-end', () => handleSessionEnd(p, session.id, { claim: true }));
  const harness = phase === 'worker' ? d.harness : d.auditHarness;
  const model = (phase === 'worker' ? d.model : d.auditModel) ?? 'default model';
  if (phase === 'worker')
    await p.journal
      .artifacts(d)
      ?.plan(planText(d, prompt.system, prompt.task))
      .catch((e: unknown) => p.logger.error({ err: e }, 'could not write plan.md'));
  await p.journal.record(d, `${phase}-started`, { sessionId: session.id, try: tryNo, harness, model });
  await p.reporter.linkSession(d, session.id);
  const retry = tryNo > 1 ? ' (retry after a watchdog kill)' : '';
  p.reporter.thought(
    d,
    phase === 'worker'
      ? `Worker started: attempt ${roundAttempt(d)} of ${pc.maxAttempts}${retry}, ${harness} ${model}.`
      : `Independent audit started: read-only ${harness} ${model} session${retry}.`,
  );
}

/**
 * What follows the end of a mapped session. With `claim`, only the first caller for a session acts (the signal
 * path); recovery passes `claim: false` and relies on the status checks. Ends of superseded sessions (an older try or
 * attempt) and of sessions the pipeline stopped itself are ignored.
 */
export async function handleSessionEnd(p: PhaseDeps, sessionId: string, options: { claim: boolean }): Promise<void> {
  const row = await p.store.session(sessionId);
  if (!row) return;
  p.watch.unwatch(sessionId);
  const claimed = await p.store.closeSession(sessionId, p.clock.now());
  if (options.claim && !claimed) return;
  const d = await p.store.get(row.dispatchId);
  if (!d || (await p.store.currentSession(d.id))?.sessionId !== sessionId) return;
  if (d.status !== STATUS_OF_PHASE[row.phase] || d.attempt !== row.attempt) return;
  if (row.endCause === 'stop' || row.endCause === 'stale') return;
  const record = await storedSession(p.sessions, sessionId);
  if (record && isActiveStatus(record.status)) return;
  if (row.endCause === 'watchdog') await afterWatchdogKill(p, d, row, record);
  else if (row.phase === 'worker') await afterWorker(p, d, row, record);
  else await afterAudit(p, d, row, record);
}

async function afterWorker(
  p: PhaseDeps,
  d: DispatchRecord,
  row: DispatchSession,
  record: StoredSession | null,
): Promise<void> {
  const output = sessionOutput(p.sessions, record);
  await p.journal
    .artifacts(d)
    ?.workerOutput(row.attempt, output)
    .catch((e: unknown) => p.logger.error({ err: e }, 'could not write the worker output'));
  await p.journal.record(d, 'worker-ended', {
    sessionId: row.sessionId,
    try: row.try,
    sessionStatus: record?.status ?? 'unknown',
    error: record?.error ?? null,
    costUsd: record?.costUsd ?? 0,
  });
  if (record?.status === 'failed')
    p.reporter.thought(
      d,
      `The worker ended with an error (${record.error ?? 'unknown'}); the auditor will check what it did.`,
    );
  const next = await transitionDispatch(p.store, d.id, 'working', 'auditing', p.clock.now(), { attempt: d.attempt });
  if (!next) return;
  await launchPhase(p, next.id, 'audit', 1);
}

async function afterAudit(
  p: PhaseDeps,
  d: DispatchRecord,
  row: DispatchSession,
  record: StoredSession | null,
): Promise<void> {
  const verdict: Verdict = parseVerdict(sessionOutput(p.sessions, record));
  if (!verdict.parsed && record?.status === 'failed')
    verdict.gaps.push(`The auditor session failed: ${record.error ?? 'unknown error'}`);
  await p.journal
    .artifacts(d)
    ?.audit(row.attempt, verdict, {
      sessionId: row.sessionId,
      sessionStatus: record?.status ?? 'unknown',
      try: row.try,
    })
    .catch((e: unknown) => p.logger.error({ err: e }, 'could not write the audit verdict'));
  await p.journal.record(d, 'audit-ended', {
    sessionId: row.sessionId,
    pass: verdict.pass,
    parsed: verdict.parsed,
    gaps: verdict.gaps,
  });
  const { maxAttempts } = p.pc;
  const used = roundAttempt(d);
  if (verdict.pass && p.delivery) {
    await passWithPullRequest(p, p.delivery, d, verdict);
    return;
  }
  if (verdict.pass) {
    const next = await transitionDispatch(p.store, d.id, 'auditing', 'done', p.clock.now(), {
      attempt: d.attempt,
      patch: { lastError: null, context: { ...d.context, lastGaps: [] } },
    });
    if (next) await finishDone(p, next, verdict);
    return;
  }
  if (used < maxAttempts) {
    const next = await transitionDispatch(p.store, d.id, 'auditing', 'working', p.clock.now(), {
      attempt: d.attempt,
      patch: { attempt: d.attempt + 1, context: { ...d.context, lastGaps: verdict.gaps } },
    });
    if (!next) return;
    p.reporter.thought(
      next,
      `The audit of attempt ${used} failed. Gaps:\n${bullets(verdict.gaps)}\nStarting attempt ${used + 1} of ${maxAttempts} with them.`,
    );
    await p.journal.record(next, 'rework', { gaps: verdict.gaps });
    await launchPhase(p, next.id, 'worker', 1);
    return;
  }
  const next = await transitionDispatch(p.store, d.id, 'auditing', 'stuck', p.clock.now(), {
    attempt: d.attempt,
    patch: { lastError: `audit failed ${used} times`, context: { ...d.context, lastGaps: verdict.gaps } },
  });
  if (!next) return;
  await p.reporter.tellStuck(
    next,
    `the audit failed ${used} time${used === 1 ? '' : 's'} (maxAttempts ${maxAttempts}). Open gaps:\n${bullets(verdict.gaps)}`,
  );
  await releaseDispatch(p, d.id);
}

async function afterWatchdogKill(
  p: PhaseDeps,
  d: DispatchRecord,
  row: DispatchSession,
  record: StoredSession | null,
): Promise<void> {
  const trip = p.watch.tripOf(row.sessionId);
  const reason = trip ? describeTrip(trip) : (record?.endReason ?? 'killed by the watchdog');
  const output = sessionOutput(p.sessions, record);
  await p.journal.record(d, 'watchdog-kill', {
    phase: row.phase,
    sessionId: row.sessionId,
    try: row.try,
    reason,
    outputTail: capTail(output, 2_048),
  });
  if (row.phase === 'worker')
    await p.journal
      .artifacts(d)
      ?.workerOutput(row.attempt, output)
      .catch((e: unknown) => p.logger.error({ err: e }, 'could not write the worker output'));
  const who = row.phase === 'worker' ? 'worker' : 'auditor';
  if (row.try < 2) {
    await p.reporter.tell(d, {
      type: 'action',
      action: 'Watchdog',
      parameter: `killed the ${who} (${reason}); retrying once`,
      result: 'retrying',
    });
    await launchPhase(p, d.id, row.phase, row.try + 1);
    return;
  }
  await markStuck(p, d, `the watchdog killed the ${who} twice (last: ${reason}).`);
}

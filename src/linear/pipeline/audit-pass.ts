// What a passed audit does: the dispatch `done` with one summary response and the issue moved to a completed state,
// or (`onPass: pull-request`) the branch pushed and a pull request opened, attached and answered before `done`.
import { errorMessage } from '../../core/errors.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { LinearIssue } from '../api/types.ts';
import type { Delivery, DeliveryDeps } from './deliver.ts';
import { deliveredResponse, deliverPullRequest } from './deliver.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import type { PhaseDeps } from './phase-deps.ts';
import { markStuck, releaseDispatch } from './phase-deps.ts';
import { doneSummary } from './prompt-vars.ts';
import { lastWorkerOutput } from './session-output.ts';
import type { Verdict } from './verdict.ts';

/** Records the pass, posts the one summary response, and moves the issue to a completed workflow state. */
export async function finishDone(p: PhaseDeps, d: DispatchRecord, verdict: Verdict): Promise<void> {
  const summary = doneSummary(d, verdict, await lastWorkerOutput(p, d));
  await p.journal
    .artifacts(d)
    ?.summary(summary)
    .catch((e: unknown) => p.logger.error({ err: e }, 'could not write summary.md'));
  await p.journal.record(d, 'done', { criteria: verdict.criteria, testResults: verdict.testResults });
  await p.reporter.tell(d, { type: 'response', body: summary });
  await p.reporter.notifyDone(d, verdict);
  try {
    const state = await completeIssue(p.linear, await p.linear.getIssue(d.issueId));
    await p.journal.record(d, 'issue-completed', { state });
  } catch (error) {
    await p.journal.record(d, 'issue-complete-failed', { error: errorMessage(error) });
  }
  await releaseDispatch(p, d.id);
}

/**
 * A pass delivered as a pull request, all before the dispatch leaves `auditing`: a crash anywhere re-runs this from
 * the audit's end (recovery), and every step is found done (the PR by its record or branch, Linear's effects in the
 * ledger). Then `done`. A push or PR that fails marks the dispatch stuck with what GitHub or git said.
 */
export async function passWithPullRequest(
  p: PhaseDeps,
  delivery: DeliveryDeps,
  d: DispatchRecord,
  verdict: Verdict,
): Promise<void> {
  const report = await lastWorkerOutput(p, d);
  p.reporter.thought(d, `The audit passed: pushing branch ${d.branch} and opening a pull request.`);
  let delivered: Delivery;
  try {
    delivered = await deliverPullRequest(delivery, d, verdict, report);
  } catch (error) {
    await markStuck(p, d, `the audit passed, but the pull request could not be opened: ${errorMessage(error)}`);
    return;
  }
  const { pr } = delivered;
  const summary = doneSummary(d, verdict, report);
  await p.journal.record(d, 'pull-request', {
    number: pr.number,
    url: pr.url,
    branch: pr.branch,
    outcome: pr.outcome,
    reviewState: delivered.reviewState,
  });
  await p.reporter.tellOnce(
    d,
    { type: 'response', body: deliveredResponse(d, delivered, summary) },
    `dispatch:${d.id}/${d.attempt}/pass`,
  );
  const next = await transitionDispatch(p.store, d.id, 'auditing', 'done', p.clock.now(), {
    attempt: d.attempt,
    patch: { lastError: null, context: { ...d.context, lastGaps: [] } },
  });
  if (!next) return;
  await p.journal
    .artifacts(next)
    ?.summary(summary)
    .catch((e: unknown) => p.logger.error({ err: e }, 'could not write summary.md'));
  await p.journal.record(next, 'done', { criteria: verdict.criteria, testResults: verdict.testResults, pr: pr.url });
  await p.reporter.notifyDone(next, verdict, pr.url);
  await releaseDispatch(p, d.id);
}

/** Moves an issue to its team's completed state ("Done" when there is one); returns the state's name. */
async function completeIssue(linear: PhaseDeps['linear'], issue: LinearIssue): Promise<string | null> {
  if (issue.state?.type === 'completed') return issue.state.name;
  const states = (await linear.teamStates(issue.team.id)).filter((s) => s.type === 'completed');
  const target = states.find((s) => /^done$/i.test(s.name)) ?? states[0];
  if (!target) return null;
  await linear.updateIssue(issue.id, { stateId: target.id });
  return target.name;
}

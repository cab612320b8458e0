// A passed dispatch delivered as a pull request (`linear.pipeline.onPass: pull-request`): the worker's branch is pushed
// and a PR opened through the one pull-request path of github/pull-requests.ts (keyed by the dispatch, looked up by
// branch before one is opened), the PR attached to the Linear issue and the issue moved to the team's review state —
// both through the durable effect ledger, so a re-run after a crash repeats nothing Linear already has.
import type { PullRequestResult, SessionPullRequests } from '../../github/pull-requests.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { LinearApi, LinearWorkflowState } from '../api/types.ts';
import type { LinearEffects } from '../effects.ts';
import { bullets, roundAttempt } from './prompt-vars.ts';
import type { Verdict } from './verdict.ts';

/** The pull-request service the pipeline opens PRs through (`SessionPullRequests` of the GitHub integration). */
export type DispatchPullRequests = Pick<SessionPullRequests, 'open'>;

/** What a delivery uses. */
export interface DeliveryDeps {
  linear: Pick<LinearApi, 'getIssue' | 'teamStates' | 'updateIssue' | 'createAttachment'>;
  effects: Pick<LinearEffects, 'run'>;
  pullRequests: DispatchPullRequests;
}

/** What a delivery did: the PR, and the review state the issue is in now (null: the team has none, left as it was). */
export interface Delivery {
  pr: PullRequestResult;
  reviewState: string | null;
}

const REPORT_MAX = 3_000;

/** The key the dispatch's PR is recorded under in the pull-request store (it has no single coding session). */
export function dispatchPullRequestKey(dispatchId: string): string {
  return `linear-dispatch:${dispatchId}`;
}

/** The PR's title: `ENG-123: <issue title>`. */
export function dispatchPullRequestTitle(d: Pick<DispatchRecord, 'identifier' | 'title'>): string {
  return `${d.identifier}: ${d.title}`;
}

/** The PR's Markdown body: the worker's summary, the audit's criteria and test results, and the Linear link. Pure. */
export function dispatchPullRequestBody(d: DispatchRecord, verdict: Verdict, workerReport: string): string {
  const report = workerReport.trim();
  const summary = report.length > REPORT_MAX ? `…${report.slice(-REPORT_MAX)}` : report;
  const model = d.model ? ` ${d.model}` : '';
  const lines = [
    `Resolves Linear ${d.identifier}: ${d.title}`,
    '',
    `**Linear:** ${d.context.issueUrl ?? d.identifier}`,
    '',
    '### Summary',
    '',
    summary || '_(the worker gave no summary)_',
    '',
    '### Audit criteria',
    '',
    verdict.criteria.length > 0 ? bullets(verdict.criteria) : '_(none listed)_',
    '',
    '### Test results',
    '',
    verdict.testResults || '_not reported_',
    '',
    `Opened by switchboard after the independent audit passed on attempt ${roundAttempt(d)} (tier ${d.tier}, ${d.harness}${model}).`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The team's review state: a `started` state named like "In Review" (or "Review", "Code review"); null when none. */
export function reviewState(states: readonly LinearWorkflowState[]): LinearWorkflowState | null {
  const started = states.filter((s) => s.type === 'started');
  return (
    started.find((s) => /^in[\s_-]*review$/i.test(s.name.trim())) ?? started.find((s) => /review/i.test(s.name)) ?? null
  );
}

/**
 * Pushes the dispatch's worktree branch and opens (or finds) its PR, attaches the PR to the issue (effect
 * `dispatch:<id>/pr-<number>/attachment`) and moves the issue to the review state (effect
 * `dispatch:<id>/<attempt>/review-state`). Throws what the push or GitHub refused (an AppError) or a LinearApiError.
 */
export async function deliverPullRequest(
  deps: DeliveryDeps,
  d: DispatchRecord,
  verdict: Verdict,
  workerReport: string,
): Promise<Delivery> {
  if (!d.worktreePath) throw new Error(`dispatch ${d.id} has no worktree to open a pull request from`);
  const title = dispatchPullRequestTitle(d);
  const pr = await deps.pullRequests.open({
    session: {
      id: dispatchPullRequestKey(d.id),
      name: d.branch,
      harness: d.harness,
      prompt: title,
      costUsd: 0,
      lastOutput: [],
      pageBase: undefined,
    },
    workdir: d.worktreePath,
    title,
    body: dispatchPullRequestBody(d, verdict, workerReport),
  });
  // Linear keeps one attachment per issue and URL; the key makes a resend after a crash carry the same id.
  await deps.effects.run(`dispatch:${d.id}/pr-${pr.number}/attachment`, 'keyed', (id) =>
    deps.linear.createAttachment({
      issueId: d.issueId,
      url: pr.url,
      title: `PR #${pr.number}: ${title}`,
      subtitle: `${pr.repo} · ${pr.branch} → ${pr.base}`,
      id,
    }),
  );
  const issue = await deps.linear.getIssue(d.issueId);
  const target = reviewState(await deps.linear.teamStates(issue.team.id));
  if (!target) return { pr, reviewState: null };
  if (issue.state?.id !== target.id)
    // Setting the same state again is harmless, so a resend after a crash (keyed mode) does no harm; once done, a
    // person's later move of the issue is never undone by a re-run.
    await deps.effects.run(`dispatch:${d.id}/${d.attempt}/review-state`, 'keyed', () =>
      deps.linear.updateIssue(issue.id, { stateId: target.id }),
    );
  return { pr, reviewState: target.name };
}

/** The agent session's response for a delivered dispatch: the PR's link, the state, then the done summary. */
export function deliveredResponse(d: DispatchRecord, delivery: Delivery, summary: string): string {
  const { pr } = delivery;
  const state = delivery.reviewState
    ? `The issue moved to **${delivery.reviewState}**.`
    : 'The team has no review state (a started state named like "In Review"), so the issue was left in its state.';
  return [
    `**Pull request opened:** [${pr.repo}#${pr.number}](${pr.url}) (\`${pr.branch}\` → \`${pr.base}\`). ${state}`,
    '',
    summary,
  ].join('\n');
}

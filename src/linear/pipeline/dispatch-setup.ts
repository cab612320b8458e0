// The first phase of a dispatch: its worktree made (or found) on this node's disk, then its first worker started.
// Recovery's takeover makes the worktree again the same way when a dispatch moves to a node without it.
import { join, resolve } from 'node:path';
import { errorMessage } from '../../core/errors.ts';
import { ensureLines } from '../../store/artifact-files.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import { EXCLUDE_LINES } from './artifacts.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import type { PhaseDeps } from './phase-deps.ts';
import { markStuck } from './phase-deps.ts';
import { launchPhase } from './phases.ts';
import { ensureWorktree } from './worktree.ts';

/**
 * Makes (or finds) the dispatch's worktree on this node's disk: its branch checked out under `worktreeDir` (default
 * `<repo>/.switchboard/worktrees`), with the pipeline's lines in its exclude file. One repository's worktrees are
 * made one at a time (`repositories`), as are the writes of its shared exclude file. Throws what git said.
 */
export async function prepareWorktree(
  p: Pick<PhaseDeps, 'pc' | 'logger' | 'repositories'>,
  d: DispatchRecord,
): Promise<Awaited<ReturnType<typeof ensureWorktree>>> {
  const { pc } = p;
  return p.repositories.run(resolve(d.repoPath), async () => {
    const worktree = await ensureWorktree({
      repo: d.repoPath,
      branch: d.branch,
      root: pc.worktreeDir ?? join(d.repoPath, '.switchboard', 'worktrees'),
      remote: pc.remote,
      fetch: pc.fetchBeforeBranch,
      onWarning: (message) => p.logger.warn({ dispatch: d.id }, message),
    });
    await ensureLines(worktree.excludeFile, EXCLUDE_LINES);
    return worktree;
  });
}

/** Prepares the worktree of a `dispatched` dispatch, then starts its first worker. */
export async function setupDispatch(p: PhaseDeps, dispatchId: string): Promise<void> {
  let d = await p.store.get(dispatchId);
  if (!d || d.status !== 'dispatched') return;
  let created: boolean;
  let base: string | null;
  try {
    const worktree = await prepareWorktree(p, d);
    created = worktree.created;
    base = worktree.base;
    d = (await p.store.update(d.id, { worktreePath: worktree.path }, p.clock.now())) ?? d;
  } catch (error) {
    await markStuck(p, d, `could not prepare the worktree: ${errorMessage(error)}`);
    return;
  }
  await p.journal.record(d, 'dispatched', {
    worktree: d.worktreePath,
    created,
    base,
    tier: d.tier,
    tierReason: d.tierReason,
    harness: d.harness,
    model: d.model,
    audit: { harness: d.auditHarness, model: d.auditModel },
  });
  const next = await transitionDispatch(p.store, d.id, 'dispatched', 'working', p.clock.now());
  if (!next) return;
  const from = base ? `, new branch from ${base}` : created ? ', existing branch' : ', reusing its worktree';
  p.reporter.thought(next, `Worktree ready: ${next.worktreePath} (branch ${next.branch}${from}). Starting the worker.`);
  await launchPhase(p, next.id, 'worker', 1);
}

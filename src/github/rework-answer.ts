// What a finished rework or mention answers: for a rework, its work is committed and pushed onto the PR's branch
// first (session_pr's path, which force-pushes only a branch switchboard created), then the text says what was done.
import type { GithubRework } from '../store/github-reworks.ts';
import type { GitRunner } from './git.ts';
import { credentialEnv } from './git.ts';
import type { GithubReworkDeps } from './rework.ts';
import { mentionAnswer, reworkAnswer } from './rework-prompt.ts';

/**
 * The answer of a finished row (`finishing`): a mention's last output and cost; a rework's last output and the commit
 * now on the PR's branch (pushed by this call); a failure's error. Throws when git or GitHub fail (the row retries).
 */
export async function answerOf(row: GithubRework, d: GithubReworkDeps): Promise<string> {
  if (!row.sessionId) return mentionAnswer({ key: row.key, error: row.error ?? 'nothing ran' });
  const record = await d.sessions.get(row.sessionId);
  const lastOutput = d.sessions.outputBlocks(record).at(-1)?.text ?? '';
  if (row.kind === 'mention')
    return mentionAnswer({
      key: row.key,
      session: record.name,
      lastOutput,
      costUsd: record.costUsd,
      status: record.status,
    });
  if (row.error) return mentionAnswer({ key: row.key, error: `The rework of ${record.name} failed: ${row.error}` });
  const result = await d.pullRequests.open({
    session: {
      id: record.id,
      name: record.name,
      harness: record.harness,
      prompt: record.prompt,
      costUsd: record.costUsd,
      lastOutput: [lastOutput],
      pageBase: d.pageBase(),
    },
    workdir: record.workdir,
    title: `Address review comments on #${row.number}`,
  });
  const commit = await pushAgain(d.git, record.workdir, result.branch, d.config.remote, () => d.api.token());
  return reworkAnswer({
    key: row.key,
    session: record.name,
    lastOutput,
    branch: result.branch,
    commit,
    committed: result.committed,
  });
}

/**
 * Pushes HEAD to `branch` once more, plainly (never forced), when the workdir is on that branch: a no-op after
 * session_pr's push, and the push a crash between its commit and its push skipped. Resolves HEAD's short hash.
 */
async function pushAgain(
  git: GitRunner,
  workdir: string,
  branch: string,
  remote: string,
  token: () => Promise<string>,
): Promise<string> {
  const head = await git(workdir, ['rev-parse', '--short', 'HEAD']);
  if (head.code !== 0) throw new Error(`git rev-parse in ${workdir} failed: ${head.stderr.trim()}`);
  const current = await git(workdir, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  if (current.code !== 0 || current.stdout.trim() !== branch)
    throw new Error(`${workdir} is no longer on ${branch}; the rework's changes were not pushed`);
  const url = await git(workdir, ['remote', 'get-url', remote]);
  if (url.code !== 0) throw new Error(`the repository in ${workdir} has no remote "${remote}"`);
  const push = await git(
    workdir,
    ['push', '--quiet', remote, `HEAD:refs/heads/${branch}`],
    credentialEnv(url.stdout.trim(), await token()),
  );
  if (push.code !== 0) throw new Error(`git push of ${branch} failed: ${push.stderr.trim()}`);
  return head.stdout.trim();
}

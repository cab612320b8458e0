// Opening a session's pull request, durably and once: the branch is recorded before it is made, the work is
// committed and pushed, an open PR for the branch is looked up before one is opened, and the PR is recorded. A repeat
// (or a restart after a crash anywhere in between) finds the record or the open PR and opens no second one.
import type { Clock } from '../core/clock.ts';
import type { GithubConfig } from '../core/config-github.ts';
import { AppError, conflict, invalidInput } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { SessionPullRequestStore } from '../store/github-pull-requests.ts';
import type { GithubApi } from './client.ts';
import type { GitEnv, GitRunner } from './git.ts';
import { credentialEnv, FALLBACK_IDENTITY, isNonFastForward } from './git.ts';
import type { SessionFacts } from './pr-body.ts';
import { firstLine, pullRequestBody } from './pr-body.ts';
import type { RepoRef } from './remote.ts';
import { parseRepoName, repoFromRemoteUrl, repoName, sessionBranch } from './remote.ts';

/** What `open` is asked: the session, its working directory and the person's options. */
export interface PullRequestRequest {
  session: SessionFacts;
  workdir: string;
  title?: string;
  /** The PR's body (Markdown); default: a summary of the session (`pullRequestBody`). */
  body?: string;
  draft?: boolean;
  base?: string;
}

/**
 * The session's pull request. `opened` by this call; `found` open on GitHub for the branch (opened by a call a crash
 * cut off) and recorded now; `existing`: recorded by an earlier call (work committed since was pushed onto it).
 */
export interface PullRequestResult {
  number: number;
  url: string;
  repo: string;
  branch: string;
  base: string;
  /** What this call did: committed uncommitted work (the commit's message), pushed, opened or found the PR. */
  committed: string | null;
  outcome: 'opened' | 'found' | 'existing';
}

/** What the service needs. */
export interface SessionPullRequestsDeps {
  config: GithubConfig;
  api: GithubApi;
  store: SessionPullRequestStore;
  git: GitRunner;
  clock: Clock;
  logger: Logger;
}

/** `session_pr`'s backend. One call per session at a time (others wait for it). */
export class SessionPullRequests {
  readonly #d: SessionPullRequestsDeps;
  readonly #running = new Map<string, Promise<unknown>>();

  constructor(deps: SessionPullRequestsDeps) {
    this.#d = deps;
  }

  /** Opens (or finds) the session's pull request; see the file's comment. Throws an AppError saying what failed. */
  async open(request: PullRequestRequest): Promise<PullRequestResult> {
    const id = request.session.id;
    const before = this.#running.get(id) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(() => this.#open(request));
    this.#running.set(id, run);
    try {
      return await run;
    } finally {
      if (this.#running.get(id) === run) this.#running.delete(id);
    }
  }

  async #git(cwd: string, args: readonly string[], env?: GitEnv): Promise<string> {
    const result = await this.#d.git(cwd, args, env);
    if (result.code !== 0)
      throw new AppError('internal', `git ${args[0] ?? ''} failed: ${result.stderr.trim() || `exit ${result.code}`}`);
    return result.stdout.trim();
  }

  async #open(request: PullRequestRequest): Promise<PullRequestResult> {
    const { config, api, store, clock, logger } = this.#d;
    const { session, workdir } = request;
    const recorded = await store.get(session.id);
    if (recorded?.state === 'opened' && recorded.number !== null && recorded.url !== null) {
      // The PR exists: work done since goes onto it (when the workdir is still on its branch); no second PR. Pushed
      // also when nothing was left uncommitted: the agent may have committed itself (a Linear rework round does).
      let committed: string | null = null;
      if ((await this.#currentBranch(workdir)) === recorded.branch) {
        committed = await this.#commitPending(workdir, request);
        await this.#push(workdir, await this.#remoteUrl(workdir), recorded.branch, recorded.branchCreated);
      }
      return {
        number: recorded.number,
        url: recorded.url,
        repo: recorded.repo,
        branch: recorded.branch,
        base: recorded.base,
        committed,
        outcome: 'existing',
      };
    }

    const inside = await this.#d.git(workdir, ['rev-parse', '--is-inside-work-tree']);
    if (inside.code !== 0 || inside.stdout.trim() !== 'true')
      throw invalidInput(`the session's working directory ${workdir} is not a git repository`);
    const remoteUrl = await this.#remoteUrl(workdir);
    const repo = this.#repo(remoteUrl);
    const base = recorded?.base ?? request.base ?? (await api.defaultBranch(repo));
    const current = await this.#currentBranch(workdir);
    let branch: string;
    let created: boolean;
    if (recorded) {
      branch = recorded.branch;
      created = recorded.branchCreated;
    } else if (current === undefined || current === base) {
      branch = sessionBranch(session.name);
      created = !(await this.#hasLocalBranch(workdir, branch));
    } else {
      branch = current;
      created = false;
    }
    // Recorded before the branch exists: after a crash, the repeat knows the branch and that switchboard made it.
    const record = await store.begin({
      sessionId: session.id,
      repo: repoName(repo),
      branch,
      base,
      branchCreated: created,
      now: clock.now(),
    });
    if (current !== record.branch) {
      const exists = await this.#hasLocalBranch(workdir, record.branch);
      await this.#git(workdir, exists ? ['switch', record.branch] : ['switch', '-c', record.branch]);
    }
    const committed = await this.#commitPending(workdir, request);
    await this.#push(workdir, remoteUrl, record.branch, record.branchCreated);

    const found = await api.findOpenPull(repo, record.branch);
    let outcome: PullRequestResult['outcome'] = 'found';
    let pull = found;
    if (!pull) {
      pull = await api.createPull(repo, {
        title: request.title?.trim() || firstLine(session.prompt, session.name),
        body: request.body ?? pullRequestBody(session),
        head: record.branch,
        base: record.base,
        draft: request.draft ?? config.draft,
      });
      outcome = 'opened';
      faultPoint('github.pr.after-open');
    }
    await store.opened(session.id, pull, clock.now());
    logger.info(
      { session: session.name, repo: repoName(repo), branch: record.branch, pr: pull.number, outcome },
      outcome === 'opened' ? 'pull request opened' : 'pull request found open and recorded',
    );
    return { ...pull, repo: repoName(repo), branch: record.branch, base: record.base, committed, outcome };
  }

  async #remoteUrl(workdir: string): Promise<string> {
    const remote = this.#d.config.remote;
    const result = await this.#d.git(workdir, ['remote', 'get-url', remote]);
    if (result.code !== 0) throw invalidInput(`the repository in ${workdir} has no remote "${remote}" (github.remote)`);
    return result.stdout.trim();
  }

  #repo(remoteUrl: string): RepoRef {
    const configured = this.#d.config.repo;
    const repo = configured ? parseRepoName(configured) : repoFromRemoteUrl(remoteUrl);
    if (!repo)
      throw invalidInput(
        `cannot tell the GitHub repository from the remote "${this.#d.config.remote}"; set github.repo (owner/name)`,
      );
    return repo;
  }

  /** The checked-out branch, or undefined when HEAD is detached. */
  async #currentBranch(workdir: string): Promise<string | undefined> {
    const result = await this.#d.git(workdir, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
    return result.code === 0 ? result.stdout.trim() : undefined;
  }

  async #hasLocalBranch(workdir: string, branch: string): Promise<boolean> {
    const result = await this.#d.git(workdir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    return result.code === 0;
  }

  /** Commits everything uncommitted (new files too); resolves the message, or null when there was nothing. */
  async #commitPending(workdir: string, request: PullRequestRequest): Promise<string | null> {
    const status = await this.#git(workdir, ['status', '--porcelain=v1', '--untracked-files=all']);
    if (status.length === 0) return null;
    await this.#git(workdir, ['add', '--all']);
    const message = request.title?.trim() || firstLine(request.session.prompt, request.session.name);
    const named = await this.#d.git(workdir, ['config', '--get', 'user.email']);
    await this.#git(workdir, ['commit', '--quiet', '-m', message], named.code === 0 ? {} : FALLBACK_IDENTITY);
    return message;
  }

  /**
   * Pushes HEAD to `branch` on the remote, with the token in the child's environment only. Forced (`+`) only for a
   * branch switchboard created; otherwise a plain push, and a rejected non-fast-forward is an error saying so.
   */
  async #push(workdir: string, remoteUrl: string, branch: string, created: boolean): Promise<void> {
    const token = await this.#d.api.token();
    const refspec = `${created ? '+' : ''}HEAD:refs/heads/${branch}`;
    const result = await this.#d.git(
      workdir,
      ['push', '--quiet', this.#d.config.remote, refspec],
      credentialEnv(remoteUrl, token),
    );
    if (result.code === 0) return;
    if (isNonFastForward(result.stderr))
      throw conflict(
        `push of ${branch} was rejected as a non-fast-forward: the remote branch has commits this one lacks, and ` +
          'switchboard force-pushes only branches it created. Merge or rebase the remote branch, then try again.',
      );
    throw new AppError('unavailable', `git push of ${branch} failed: ${result.stderr.trim() || `exit ${result.code}`}`);
  }
}

// The GitHub REST client switchboard uses: Octokit at `github.apiUrl`, with a token or as a GitHub App installation
// (tokens minted by @octokit/auth-app, cached and minted again before they expire). Only the calls pull requests need.
import { createAppAuth } from '@octokit/auth-app';
import { Octokit, RequestError } from 'octokit';
import { AppError, errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { GithubAuth } from './auth.ts';
import type { RepoRef } from './remote.ts';

/** A pull request as switchboard needs it. */
export interface PullRef {
  number: number;
  url: string;
}

/** What opening a pull request asks for. */
export interface NewPull {
  title: string;
  body: string;
  /** The branch with the work (in the same repository). */
  head: string;
  base: string;
  draft: boolean;
}

/** The GitHub calls of pull requests; `GithubRest` is the real one. */
export interface GithubApi {
  /** The repository's default branch. */
  defaultBranch(repo: RepoRef): Promise<string>;
  /** The open pull request whose head is `branch` of this repository, if any. */
  findOpenPull(repo: RepoRef, branch: string): Promise<PullRef | undefined>;
  /** Opens a pull request. */
  createPull(repo: RepoRef, pull: NewPull): Promise<PullRef>;
  /** A token git can push with (an installation token for an App). */
  token(): Promise<string>;
}

/** Builds the Octokit of `auth` (which must not be `missing`) at `baseUrl`. */
export function octokitFor(auth: Exclude<GithubAuth, { kind: 'missing' }>, baseUrl: string, logger: Logger): Octokit {
  const log = {
    debug: (message: string) => logger.debug({ github: message }, 'github api'),
    info: (message: string) => logger.debug({ github: message }, 'github api'),
    warn: (message: string) => logger.warn({ github: message }, 'github api'),
    error: (message: string) => logger.error({ github: message }, 'github api'),
  };
  switch (auth.kind) {
    case 'token':
      return new Octokit({ auth: auth.token, baseUrl, log });
    case 'app':
      return new Octokit({
        authStrategy: createAppAuth,
        auth: { appId: auth.appId, privateKey: auth.privateKey, installationId: auth.installationId },
        baseUrl,
        log,
      });
  }
}

/**
 * An error of a GitHub call as an AppError the caller can act on: 401/403 `forbidden`, 404 `not_found`, 422
 * `invalid_input` (e.g. "No commits between main and the branch"), anything else (5xx, the network) `unavailable`.
 */
export function githubError(what: string, error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof RequestError) {
    const detail = (error.response?.data as { errors?: { message?: string }[] } | undefined)?.errors
      ?.map((e) => e.message)
      .filter(Boolean)
      .join('; ');
    const message = `GitHub refused to ${what} (${error.status}): ${error.message.split(' - ')[0] ?? ''}${detail ? ` — ${detail}` : ''}`;
    if (error.status === 401 || error.status === 403) return new AppError('forbidden', message);
    if (error.status === 404) return new AppError('not_found', message);
    if (error.status === 422) return new AppError('invalid_input', message);
  }
  return new AppError('unavailable', `GitHub: could not ${what}: ${errorMessage(error)}`);
}

/** The real GitHubApi over Octokit; every failure is thrown as `githubError`. */
export class GithubRest implements GithubApi {
  readonly #octokit: Octokit;

  /** `auth` must hold credentials; `baseUrl` is `github.apiUrl`. */
  constructor(auth: Exclude<GithubAuth, { kind: 'missing' }>, baseUrl: string, logger: Logger) {
    this.#octokit = octokitFor(auth, baseUrl.replace(/\/+$/, ''), logger);
  }

  async defaultBranch(repo: RepoRef): Promise<string> {
    try {
      const { data } = await this.#octokit.rest.repos.get({ owner: repo.owner, repo: repo.repo });
      return data.default_branch;
    } catch (error) {
      throw githubError(`read ${repo.owner}/${repo.repo}`, error);
    }
  }

  async findOpenPull(repo: RepoRef, branch: string): Promise<PullRef | undefined> {
    const data = await this.#octokit.rest.pulls
      .list({ owner: repo.owner, repo: repo.repo, head: `${repo.owner}:${branch}`, state: 'open', per_page: 10 })
      .then(
        (r) => r.data,
        (error: unknown) => {
          throw githubError('list pull requests', error);
        },
      );
    const found = data.find((p) => p.head.ref === branch) ?? data[0];
    return found ? { number: found.number, url: found.html_url } : undefined;
  }

  async createPull(repo: RepoRef, pull: NewPull): Promise<PullRef> {
    try {
      const { data } = await this.#octokit.rest.pulls.create({
        owner: repo.owner,
        repo: repo.repo,
        title: pull.title,
        body: pull.body,
        head: pull.head,
        base: pull.base,
        draft: pull.draft,
      });
      return { number: data.number, url: data.html_url };
    } catch (error) {
      throw githubError('open the pull request', error);
    }
  }

  async token(): Promise<string> {
    // Token auth answers the token; App auth answers a cached installation token, minted again before it expires.
    const auth = (await this.#octokit.auth({ type: 'installation' }).catch((error: unknown) => {
      throw githubError('give an installation token', error);
    })) as { token?: unknown };
    if (typeof auth.token !== 'string' || auth.token.length === 0) throw new Error('github: no token to push with');
    return auth.token;
  }
}

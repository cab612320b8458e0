// The GitHub calls of the review loop and mentions: a review's comments, and a thread's comments (listed to find an
// answer already posted, created to answer). `GithubThreadsRest` is Octokit; tests may pass their own.
import type { Octokit } from 'octokit';
import type { Logger } from '../core/logger.ts';
import type { GithubAuth } from './auth.ts';
import { githubError, octokitFor } from './client.ts';
import type { RepoRef } from './remote.ts';

/** A review comment: the file and line it is on (null for a comment on the whole file) and its text. */
export interface ReviewComment {
  id: number;
  path: string | null;
  line: number | null;
  body: string;
}

/** A comment of an issue or pull request thread. */
export interface ThreadComment {
  id: number;
  body: string;
}

/** The calls of reviews and threads; every failure is thrown as `githubError`. */
export interface GithubThreadsApi {
  /** The comments of review `reviewId` on pull request `pull`. */
  reviewComments(repo: RepoRef, pull: number, reviewId: number): Promise<ReviewComment[]>;
  /** The comments of issue (or pull request) `issue`, oldest first (up to 100 per page, every page). */
  issueComments(repo: RepoRef, issue: number): Promise<ThreadComment[]>;
  /** Posts a comment on issue (or pull request) `issue`; resolves its id. */
  createIssueComment(repo: RepoRef, issue: number, body: string): Promise<number>;
}

/** The real GithubThreadsApi over Octokit. */
export class GithubThreadsRest implements GithubThreadsApi {
  readonly #octokit: Octokit;

  /** `auth` must hold credentials; `baseUrl` is `github.apiUrl`. */
  constructor(auth: Exclude<GithubAuth, { kind: 'missing' }>, baseUrl: string, logger: Logger) {
    this.#octokit = octokitFor(auth, baseUrl.replace(/\/+$/, ''), logger);
  }

  async reviewComments(repo: RepoRef, pull: number, reviewId: number): Promise<ReviewComment[]> {
    try {
      const data = await this.#octokit.paginate(this.#octokit.rest.pulls.listCommentsForReview, {
        owner: repo.owner,
        repo: repo.repo,
        pull_number: pull,
        review_id: reviewId,
        per_page: 100,
      });
      return data.map((c) => {
        const extra = c as { line?: number | null; original_line?: number | null };
        return { id: c.id, path: c.path, line: extra.line ?? extra.original_line ?? c.position ?? null, body: c.body };
      });
    } catch (error) {
      throw githubError(`list the comments of review ${reviewId}`, error);
    }
  }

  async issueComments(repo: RepoRef, issue: number): Promise<ThreadComment[]> {
    try {
      const data = await this.#octokit.paginate(this.#octokit.rest.issues.listComments, {
        owner: repo.owner,
        repo: repo.repo,
        issue_number: issue,
        per_page: 100,
      });
      return data.map((c) => ({ id: c.id, body: c.body ?? '' }));
    } catch (error) {
      throw githubError(`list the comments of #${issue}`, error);
    }
  }

  async createIssueComment(repo: RepoRef, issue: number, body: string): Promise<number> {
    try {
      const { data } = await this.#octokit.rest.issues.createComment({
        owner: repo.owner,
        repo: repo.repo,
        issue_number: issue,
        body,
      });
      return data.id;
    } catch (error) {
      throw githubError(`comment on #${issue}`, error);
    }
  }
}

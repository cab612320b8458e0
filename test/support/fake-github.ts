// A fake GitHub REST API on 127.0.0.1, as far as Octokit calls it for pull requests: GET /repos/{o}/{r},
// GET/POST /repos/{o}/{r}/pulls (pulls recorded; a second open PR for one head is refused with 422, as GitHub does) and
// POST /app/installations/{id}/access_tokens (a GitHub App's installation tokens), a review's comments
// (GET /repos/{o}/{r}/pulls/{n}/reviews/{id}/comments, set with `addReviewComments`) and a thread's comments
// (GET/POST /repos/{o}/{r}/issues/{n}/comments). Plus a sender of signed webhooks and payload builders.
import { createHmac, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedHttpRequest } from './mock-http.ts';
import { readRequest } from './mock-http.ts';

/** A pull request the fake holds. */
export interface FakePull {
  number: number;
  repo: string;
  title: string;
  body: string;
  head: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
}

/** A review comment the fake holds (listed under its review). */
export interface FakeReviewComment {
  id: number;
  path: string;
  line: number | null;
  body: string;
}

/** A comment posted on an issue or pull request thread. */
export interface FakeIssueComment {
  id: number;
  repo: string;
  issue: number;
  body: string;
}

/** The running fake. */
export interface FakeGithub {
  /** The API base (`github.apiUrl`). */
  url: string;
  requests: RecordedHttpRequest[];
  pulls: FakePull[];
  /** Installation tokens minted so far. */
  tokens: string[];
  /** Comments posted on threads (issues and pull requests), oldest first. */
  issueComments: FakeIssueComment[];
  /** Sets the comments review `reviewId` holds. */
  addReviewComments(reviewId: number, comments: FakeReviewComment[]): void;
  /** Sets a repository's default branch (every repository defaults to `main`). */
  setDefaultBranch(repo: string, branch: string): void;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** Starts the fake on a free port. */
export async function startFakeGithub(): Promise<FakeGithub> {
  const requests: RecordedHttpRequest[] = [];
  const pulls: FakePull[] = [];
  const tokens: string[] = [];
  const defaults = new Map<string, string>();
  const issueComments: FakeIssueComment[] = [];
  const reviewComments = new Map<number, FakeReviewComment[]>();
  const pullJson = (p: FakePull) => ({
    number: p.number,
    html_url: `https://github.example/${p.repo}/pull/${p.number}`,
    state: p.state,
    title: p.title,
    body: p.body,
    draft: p.draft,
    head: { ref: p.head, label: `${p.repo.split('/')[0] ?? ''}:${p.head}` },
    base: { ref: p.base },
  });
  const server = createServer((req, res) => {
    void (async () => {
      const { recorded } = await readRequest(req);
      requests.push(recorded);
      const { method, path, query } = recorded;
      const params = new URLSearchParams(query);
      const token = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
      if (method === 'POST' && token) {
        const minted = `ghs_fake_${tokens.length + 1}`;
        tokens.push(minted);
        json(res, 201, { token: minted, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
        return;
      }
      if (!/^(token|bearer) \S+$/i.test(String(recorded.headers.authorization ?? ''))) {
        json(res, 401, { message: 'Requires authentication' });
        return;
      }
      const review = /^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/reviews\/(\d+)\/comments$/.exec(path);
      if (review && method === 'GET') {
        const comments = reviewComments.get(Number(review[1])) ?? [];
        json(
          res,
          200,
          comments.map((c) => ({
            ...c,
            pull_request_review_id: Number(review[1]),
            position: c.line,
            original_line: c.line,
          })),
        );
        return;
      }
      const thread = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(path);
      if (thread) {
        const repo = `${thread[1] ?? ''}/${thread[2] ?? ''}`;
        const issue = Number(thread[3]);
        if (method === 'GET') {
          json(
            res,
            200,
            issueComments.filter((c) => c.repo === repo && c.issue === issue).map((c) => ({ id: c.id, body: c.body })),
          );
          return;
        }
        const body = (recorded.body as { body?: string } | undefined)?.body;
        if (method === 'POST' && body) {
          const comment: FakeIssueComment = { id: 9000 + issueComments.length, repo, issue, body };
          issueComments.push(comment);
          json(res, 201, { id: comment.id, body });
          return;
        }
      }
      const repoPath = /^\/repos\/([^/]+)\/([^/]+)(\/pulls)?$/.exec(path);
      if (!repoPath) {
        json(res, 404, { message: 'Not Found' });
        return;
      }
      const repo = `${repoPath[1] ?? ''}/${repoPath[2] ?? ''}`;
      if (!repoPath[3] && method === 'GET') {
        json(res, 200, { full_name: repo, default_branch: defaults.get(repo) ?? 'main' });
        return;
      }
      if (repoPath[3] && method === 'GET') {
        const head = params.get('head');
        const state = params.get('state') ?? 'open';
        const found = pulls.filter(
          (p) =>
            p.repo === repo &&
            (state === 'all' || p.state === state) &&
            (!head || `${repo.split('/')[0] ?? ''}:${p.head}` === head),
        );
        json(res, 200, found.map(pullJson));
        return;
      }
      if (repoPath[3] && method === 'POST') {
        const body = recorded.body as { title?: string; body?: string; head?: string; base?: string; draft?: boolean };
        if (!body.title || !body.head || !body.base) {
          json(res, 422, { message: 'Validation Failed' });
          return;
        }
        if (pulls.some((p) => p.repo === repo && p.head === body.head && p.state === 'open')) {
          json(res, 422, { message: 'Validation Failed', errors: [{ message: 'A pull request already exists' }] });
          return;
        }
        const pull: FakePull = {
          number: pulls.length + 1,
          repo,
          title: body.title,
          body: body.body ?? '',
          head: body.head,
          base: body.base,
          draft: body.draft ?? false,
          state: 'open',
        };
        pulls.push(pull);
        json(res, 201, pullJson(pull));
        return;
      }
      json(res, 404, { message: 'Not Found' });
    })().catch((error: unknown) => json(res, 500, { message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    pulls,
    tokens,
    issueComments,
    addReviewComments: (reviewId, comments) => reviewComments.set(reviewId, comments),
    setDefaultBranch: (repo, branch) => defaults.set(repo, branch),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The `X-Hub-Signature-256` of `body` under `secret`. */
export function githubSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * POSTs a webhook delivery to `url` (the daemon's /github/webhook), signed with `secret` unless `signature` is given;
 * resolves the status and body text.
 */
export async function sendGithubWebhook(
  url: string,
  secret: string,
  event: string,
  payload: unknown,
  options: { deliveryId?: string; signature?: string } = {},
): Promise<{ status: number; text: string; deliveryId: string }> {
  const body = JSON.stringify(payload);
  const deliveryId = options.deliveryId ?? randomUUID();
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': deliveryId,
      'x-hub-signature-256': options.signature ?? githubSignature(secret, body),
    },
    body,
  });
  return { status: res.status, text: await res.text(), deliveryId };
}

/** A `pull_request_review` payload (a review of `pull` on `repo`'s `branch`). */
export function reviewPayload(
  repo: string,
  pull: number,
  branch: string,
  state = 'changes_requested',
  options: { id?: number; author?: string; bot?: boolean } = {},
): unknown {
  return {
    action: 'submitted',
    repository: { full_name: repo },
    pull_request: { number: pull, head: { ref: branch } },
    review: {
      id: options.id ?? 1,
      state,
      body: 'please rename the function',
      user: { login: options.author ?? 'reviewer', type: options.bot ? 'Bot' : 'User' },
      author_association: 'COLLABORATOR',
    },
  };
}

/** An `issue_comment` (created) payload: `body` on issue (or, with `onPull`, pull request) `issue` of `repo`. */
export function issueCommentPayload(
  repo: string,
  issue: number,
  body: string,
  options: { id?: number; author?: string; association?: string; onPull?: boolean; title?: string } = {},
): unknown {
  return {
    action: 'created',
    repository: { full_name: repo },
    issue: {
      number: issue,
      title: options.title ?? 'The login page is slow',
      body: 'It takes ten seconds.',
      ...(options.onPull ? { pull_request: { url: 'x' } } : {}),
    },
    comment: {
      id: options.id ?? 501,
      body,
      user: { login: options.author ?? 'maintainer', type: 'User' },
      author_association: options.association ?? 'OWNER',
    },
  };
}

/** A `pull_request_review_comment` payload: `body` on `path:line` of `pull`, in review `reviewId` (null: none). */
export function reviewCommentPayload(
  repo: string,
  pull: number,
  branch: string,
  comment: { id: number; path: string; line: number; body: string; reviewId?: number | null; action?: string },
): unknown {
  return {
    action: comment.action ?? 'created',
    repository: { full_name: repo },
    pull_request: { number: pull, head: { ref: branch } },
    comment: {
      id: comment.id,
      body: comment.body,
      path: comment.path,
      line: comment.line,
      pull_request_review_id: comment.reviewId ?? null,
      user: { login: 'reviewer', type: 'User' },
      author_association: 'COLLABORATOR',
    },
  };
}

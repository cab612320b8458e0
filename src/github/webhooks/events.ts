// The GitHub webhook events switchboard reads (reviews and review comments for the rework loop, issue comments for
// mentions), parsed from a stored delivery.
import { z } from 'zod';

const user = z.looseObject({ login: z.string(), type: z.string().optional() }).nullish();
const pull = z.looseObject({
  number: z.number().int(),
  title: z.string().nullish(),
  body: z.string().nullish(),
  head: z.looseObject({ ref: z.string() }),
});
const repository = z.looseObject({ full_name: z.string() });

const reviewPayload = z.looseObject({
  action: z.string(),
  repository,
  pull_request: pull,
  review: z.looseObject({
    id: z.number().int(),
    state: z.string(),
    body: z.string().nullish(),
    user,
    author_association: z.string().nullish(),
  }),
});

const reviewCommentPayload = z.looseObject({
  action: z.string(),
  repository,
  pull_request: pull,
  comment: z.looseObject({
    id: z.number().int(),
    body: z.string(),
    path: z.string().nullish(),
    line: z.number().int().nullish(),
    original_line: z.number().int().nullish(),
    pull_request_review_id: z.number().int().nullish(),
    user,
    author_association: z.string().nullish(),
  }),
});

const issueCommentPayload = z.looseObject({
  action: z.string(),
  repository,
  issue: z.looseObject({
    number: z.number().int(),
    title: z.string().nullish(),
    body: z.string().nullish(),
    pull_request: z.unknown().optional(),
  }),
  comment: z.looseObject({ id: z.number().int(), body: z.string(), user, author_association: z.string().nullish() }),
});

/** Who wrote a review or comment. */
export interface GithubAuthor {
  author: string | null;
  /** The author is a bot (a GitHub App, switchboard's own among them). */
  bot: boolean;
  /** The author's `author_association` (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …). */
  association: string | null;
}

/** A webhook event switchboard records; `other` for every event it does not read. */
export type GithubEvent =
  | ({
      kind: 'review';
      action: string;
      repo: string;
      pull: number;
      branch: string;
      id: number;
      state: string;
      body: string;
    } & GithubAuthor)
  | ({
      kind: 'reviewComment';
      action: string;
      repo: string;
      pull: number;
      branch: string;
      id: number;
      /** The review the comment belongs to (GitHub files every review comment under one). */
      reviewId: number | null;
      path: string | null;
      line: number | null;
      body: string;
    } & GithubAuthor)
  | ({
      kind: 'issueComment';
      action: string;
      repo: string;
      issue: number;
      onPull: boolean;
      id: number;
      title: string;
      /** The issue's (or pull request's) own text. */
      issueBody: string;
      body: string;
    } & GithubAuthor)
  | { kind: 'other'; event: string };

function authorOf(u: z.infer<typeof user>, association: string | null | undefined): GithubAuthor {
  return {
    author: u?.login ?? null,
    bot: u?.type === 'Bot' || (u?.login.endsWith('[bot]') ?? false),
    association: association ?? null,
  };
}

/** Parses a stored delivery's payload as `event`; throws (a ZodError) when a read event's payload lacks its fields. */
export function parseGithubEvent(event: string, payload: unknown): GithubEvent {
  switch (event) {
    case 'pull_request_review': {
      const p = reviewPayload.parse(payload);
      return {
        kind: 'review',
        action: p.action,
        repo: p.repository.full_name,
        pull: p.pull_request.number,
        branch: p.pull_request.head.ref,
        id: p.review.id,
        state: p.review.state,
        body: p.review.body ?? '',
        ...authorOf(p.review.user, p.review.author_association),
      };
    }
    case 'pull_request_review_comment': {
      const p = reviewCommentPayload.parse(payload);
      return {
        kind: 'reviewComment',
        action: p.action,
        repo: p.repository.full_name,
        pull: p.pull_request.number,
        branch: p.pull_request.head.ref,
        id: p.comment.id,
        reviewId: p.comment.pull_request_review_id ?? null,
        path: p.comment.path ?? null,
        line: p.comment.line ?? p.comment.original_line ?? null,
        body: p.comment.body,
        ...authorOf(p.comment.user, p.comment.author_association),
      };
    }
    case 'issue_comment': {
      const p = issueCommentPayload.parse(payload);
      return {
        kind: 'issueComment',
        action: p.action,
        repo: p.repository.full_name,
        issue: p.issue.number,
        onPull: p.issue.pull_request !== undefined,
        id: p.comment.id,
        title: p.issue.title ?? '',
        issueBody: p.issue.body ?? '',
        body: p.comment.body,
        ...authorOf(p.comment.user, p.comment.author_association),
      };
    }
    default:
      return { kind: 'other', event };
  }
}

/** A short description of an event for the delivery's recorded outcome and the log. */
export function describeGithubEvent(e: GithubEvent): string {
  switch (e.kind) {
    case 'review':
      return `review ${e.state} on ${e.repo}#${e.pull} by ${e.author ?? '?'}`;
    case 'reviewComment':
      return `review comment on ${e.repo}#${e.pull} ${e.path ?? ''}${e.line === null ? '' : `:${e.line}`} by ${e.author ?? '?'}`;
    case 'issueComment':
      return `comment on ${e.repo}#${e.issue} by ${e.author ?? '?'}`;
    case 'other':
      return `ignored: ${e.event}`;
  }
}

// The GitHub webhook events switchboard reads (for the later review rework loop), parsed from a stored delivery.
import { z } from 'zod';

const user = z.looseObject({ login: z.string() }).nullish();
const repository = z.looseObject({ full_name: z.string() });

const reviewPayload = z.looseObject({
  action: z.string(),
  repository,
  pull_request: z.looseObject({ number: z.number().int(), head: z.looseObject({ ref: z.string() }) }),
  review: z.looseObject({ id: z.number().int(), state: z.string(), body: z.string().nullish(), user }),
});

const reviewCommentPayload = z.looseObject({
  action: z.string(),
  repository,
  pull_request: z.looseObject({ number: z.number().int(), head: z.looseObject({ ref: z.string() }) }),
  comment: z.looseObject({
    id: z.number().int(),
    body: z.string(),
    path: z.string().nullish(),
    line: z.number().int().nullish(),
    user,
  }),
});

const issueCommentPayload = z.looseObject({
  action: z.string(),
  repository,
  issue: z.looseObject({ number: z.number().int(), pull_request: z.unknown().optional() }),
  comment: z.looseObject({ id: z.number().int(), body: z.string(), user }),
});

/** A webhook event switchboard records; `other` for every event it does not read. */
export type GithubEvent =
  | {
      kind: 'review';
      action: string;
      repo: string;
      pull: number;
      branch: string;
      state: string;
      body: string;
      author: string | null;
    }
  | {
      kind: 'reviewComment';
      action: string;
      repo: string;
      pull: number;
      branch: string;
      path: string | null;
      line: number | null;
      body: string;
      author: string | null;
    }
  | {
      kind: 'issueComment';
      action: string;
      repo: string;
      issue: number;
      onPull: boolean;
      body: string;
      author: string | null;
    }
  | { kind: 'other'; event: string };

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
        state: p.review.state,
        body: p.review.body ?? '',
        author: p.review.user?.login ?? null,
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
        path: p.comment.path ?? null,
        line: p.comment.line ?? null,
        body: p.comment.body,
        author: p.comment.user?.login ?? null,
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
        body: p.comment.body,
        author: p.comment.user?.login ?? null,
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

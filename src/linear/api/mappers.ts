// zod schemas of the raw GraphQL answers and their mapping to the contract's plain types.
import { z } from 'zod';
import { formatZodError } from '../../core/errors.ts';
import type { LinearComment, LinearIssue, LinearLabel, LinearRelation, LinearWorkflowState } from './types.ts';
import { LinearApiError } from './types.ts';

const user = z.object({ id: z.string(), name: z.string() });
const label = z.object({ id: z.string(), name: z.string() });
const state = z.object({ id: z.string(), name: z.string(), type: z.string() });
const nodes = <T extends z.ZodType>(item: T) => z.object({ nodes: z.array(item) });

const issueCore = z.object({
  id: z.string(),
  identifier: z.string(),
  title: z.string(),
  description: z.string().nullish(),
  branchName: z.string(),
  url: z.string(),
  priority: z.number(),
  estimate: z.number().nullish(),
  state: state.nullish(),
  team: z.object({ id: z.string(), key: z.string(), name: z.string() }),
  project: z.object({ id: z.string(), name: z.string() }).nullish(),
  parent: z.object({ id: z.string() }).nullish(),
  assignee: user.nullish(),
  delegate: user.nullish(),
  labels: nodes(label),
  relations: nodes(
    z.object({ id: z.string(), type: z.string(), relatedIssue: z.object({ id: z.string(), identifier: z.string() }) }),
  ),
  inverseRelations: nodes(
    z.object({ id: z.string(), type: z.string(), issue: z.object({ id: z.string(), identifier: z.string() }) }),
  ).optional(),
});

const comment = z.object({ id: z.string(), body: z.string(), createdAt: z.string(), user: user.nullish() });

export const issueQueryResult = z.object({ issue: issueCore.extend({ comments: nodes(comment) }) });

export const projectQueryResult = z.object({
  project: z.object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullish(),
    teams: nodes(z.object({ id: z.string() })),
    issues: nodes(issueCore).extend({
      pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullish() }),
    }),
  }),
});

export const teamStatesResult = z.object({ team: z.object({ states: nodes(state) }) });
export const teamLabelsResult = z.object({ issueLabels: nodes(label) });
export const issueCreateResult = z.object({
  issueCreate: z.object({
    success: z.boolean(),
    issue: z.object({ id: z.string(), identifier: z.string() }).nullish(),
  }),
});
export const agentActivityCreateResult = z.object({
  agentActivityCreate: z.object({ success: z.boolean(), agentActivity: z.object({ id: z.string() }).nullish() }),
});
export const attachmentCreateResult = z.object({
  attachmentCreate: z.object({ success: z.boolean(), attachment: z.object({ id: z.string() }).nullish() }),
});
export const identityResult = z.object({ viewer: user, organization: z.object({ id: z.string(), name: z.string() }) });

/** Parses a GraphQL `data` object with `schema`; an answer of the wrong shape is a server error (retrying will not help the caller, but it is not their fault). */
export function parseData<T extends z.ZodType>(operation: string, schema: T, data: unknown): z.infer<T> {
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    throw new LinearApiError('server', `${operation}: unexpected answer from Linear: ${formatZodError(parsed.error)}`);
  return parsed.data;
}

/** Inverse relation types, seen from the other issue. */
const INVERSE: Record<string, string> = { blocks: 'blocked_by', duplicate: 'duplicated_by' };

function relationsOf(issue: z.infer<typeof issueCore>): LinearRelation[] {
  const out: LinearRelation[] = issue.relations.nodes.map((r) => ({
    id: r.id,
    type: r.type,
    relatedIssueId: r.relatedIssue.id,
    relatedIdentifier: r.relatedIssue.identifier,
  }));
  for (const r of issue.inverseRelations?.nodes ?? []) {
    out.push({
      id: r.id,
      type: INVERSE[r.type] ?? r.type,
      relatedIssueId: r.issue.id,
      relatedIdentifier: r.issue.identifier,
    });
  }
  return out;
}

/** Maps a raw issue to the contract type; `comments` oldest first, at most the last 10. */
export function toIssue(issue: z.infer<typeof issueCore>, comments: z.infer<typeof comment>[] = []): LinearIssue {
  const sorted: LinearComment[] = [...comments]
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .slice(-10)
    .map((c) => ({ id: c.id, body: c.body, createdAt: c.createdAt, user: c.user ?? null }));
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    description: issue.description ?? '',
    branchName: issue.branchName,
    url: issue.url,
    priority: issue.priority,
    estimate: issue.estimate ?? null,
    state: issue.state ?? null,
    team: issue.team,
    project: issue.project ?? null,
    parentId: issue.parent?.id ?? null,
    assignee: issue.assignee ?? null,
    delegate: issue.delegate ?? null,
    labels: issue.labels.nodes,
    comments: sorted,
    relations: relationsOf(issue),
  };
}

export function toStates(raw: z.infer<typeof teamStatesResult>): LinearWorkflowState[] {
  return raw.team.states.nodes;
}

export function toLabels(raw: z.infer<typeof teamLabelsResult>): LinearLabel[] {
  return raw.issueLabels.nodes;
}

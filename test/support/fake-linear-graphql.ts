// GraphQL side of the fake Linear: a tiny reader of operation type, name and root fields, and the resolvers of the
// root fields switchboard uses, over the FakeWorkspace. Answers are supersets of what the queries select.
import type { FakeWorkspace } from './fake-linear-workspace.ts';

/** What the fake reads from a GraphQL document. */
export interface ParsedOperation {
  kind: 'query' | 'mutation';
  name: string | null;
  rootFields: string[];
}

function skipBalanced(text: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '"') {
      i += 1;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    } else if (ch === open) depth += 1;
    else if (ch === close) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

/** Reads the first operation of a document: its kind, its name and the names of its root fields (aliases resolved). */
export function parseOperation(query: string): ParsedOperation {
  const text = query.replace(/#[^\n]*/g, '');
  const head = /^\s*(query|mutation|subscription)?\s*([A-Za-z_][A-Za-z0-9_]*)?/.exec(text);
  const kind = head?.[1] === 'mutation' ? 'mutation' : 'query';
  const name = head?.[2] ?? null;
  let i = text.indexOf('{');
  const varsStart = text.indexOf('(');
  if (varsStart !== -1 && varsStart < i) i = text.indexOf('{', skipBalanced(text, varsStart, '(', ')'));
  const rootFields: string[] = [];
  if (i === -1) return { kind, name, rootFields };
  i += 1;
  while (i < text.length) {
    const rest = text.slice(i);
    const ws = /^[\s,]*/.exec(rest)?.[0].length ?? 0;
    i += ws;
    const ch = text[i];
    if (ch === undefined || ch === '}') break;
    const ident = /^(\.\.\.\s*)?([A-Za-z_][A-Za-z0-9_]*)(\s*:\s*([A-Za-z_][A-Za-z0-9_]*))?/.exec(text.slice(i));
    if (!ident) {
      i += 1;
      continue;
    }
    i += ident[0].length;
    if (!ident[1]) rootFields.push(ident[4] ?? (ident[2] as string));
    i += /^\s*/.exec(text.slice(i))?.[0].length ?? 0;
    if (text[i] === '(') i = skipBalanced(text, i, '(', ')');
    i += /^\s*/.exec(text.slice(i))?.[0].length ?? 0;
    if (text[i] === '{') i = skipBalanced(text, i, '{', '}');
  }
  return { kind, name, rootFields };
}

/** A resolver failure that becomes a GraphQL error in the answer. */
export class FakeGraphQLError extends Error {
  readonly extensions: Record<string, unknown>;
  readonly status: number;

  constructor(message: string, extensions: Record<string, unknown>, status = 200) {
    super(message);
    this.extensions = extensions;
    this.status = status;
  }
}

/** Linear's shape of a user error ("Entity not found", invalid input): HTTP 200, extensions.userError = true. */
export function userError(message: string, userPresentableMessage = message): FakeGraphQLError {
  return new FakeGraphQLError(message, {
    type: 'invalid input',
    code: 'INPUT_ERROR',
    userError: true,
    userPresentableMessage,
  });
}

type Vars = Record<string, unknown>;
type Input = Record<string, unknown>;

function input(vars: Vars): Input {
  const value = vars.input;
  if (typeof value !== 'object' || value === null) throw userError('Argument Validation Error: input is required');
  return value as Input;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Resolves one root field against the workspace. `recordMutation` is called for every mutation before it applies. */
export function resolveRootField(
  ws: FakeWorkspace,
  field: string,
  vars: Vars,
  options: { projectPageSize: number },
): unknown {
  switch (field) {
    case 'viewer':
      return ws.userJson(ws.appUser.id);
    case 'organization':
      return {
        __typename: 'Organization',
        id: ws.organization.id,
        name: ws.organization.name,
        urlKey: ws.organization.urlKey,
      };
    case 'issue': {
      const issue = ws.findIssue(str(vars.id) ?? '');
      if (!issue) throw userError('Entity not found: Issue', 'Could not find referenced Issue.');
      return ws.issueJson(issue);
    }
    case 'team': {
      const team = ws.teams.get(str(vars.id) ?? '');
      if (!team) throw userError('Entity not found: Team', 'Could not find referenced Team.');
      const states = [...ws.states.values()]
        .filter((s) => s.teamId === team.id)
        .map((s) => ({ id: s.id, name: s.name, type: s.type }));
      const labels = [...ws.labels.values()]
        .filter((l) => l.teamId === team.id)
        .map((l) => ({ id: l.id, name: l.name }));
      return { ...team, states: { nodes: states }, labels: { nodes: labels } };
    }
    case 'issueLabels': {
      const teamId = str(vars.teamId);
      const labels = [...ws.labels.values()].filter(
        (l) => teamId === undefined || l.teamId === teamId || l.teamId === null,
      );
      return { nodes: labels.map((l) => ({ id: l.id, name: l.name })) };
    }
    case 'project': {
      const project = ws.projects.get(str(vars.id) ?? '');
      if (!project) throw userError('Entity not found: Project', 'Could not find referenced Project.');
      const all = [...ws.issues.values()].filter((i) => i.projectId === project.id);
      const start = vars.after ? Number(vars.after) : 0;
      const page = all.slice(start, start + options.projectPageSize);
      const end = start + page.length;
      return {
        id: project.id,
        name: project.name,
        description: project.description,
        teams: { nodes: project.teamIds.map((id) => ({ id })) },
        issues: {
          nodes: page.map((i) => ws.issueJson(i, false)),
          pageInfo: { hasNextPage: end < all.length, endCursor: end < all.length ? String(end) : null },
        },
      };
    }
    case 'issueUpdate': {
      const issue = ws.findIssue(str(vars.id) ?? '');
      if (!issue) throw userError('Entity not found: Issue', 'Could not find referenced Issue.');
      const patch = input(vars);
      if (typeof patch.title === 'string') issue.title = patch.title;
      if (typeof patch.description === 'string') issue.description = patch.description;
      if (typeof patch.stateId === 'string') {
        if (!ws.states.has(patch.stateId))
          throw userError('Entity not found: WorkflowState', 'Could not find referenced state.');
        issue.stateId = patch.stateId;
      }
      if ('estimate' in patch) issue.estimate = (patch.estimate as number | null) ?? null;
      if (typeof patch.priority === 'number') issue.priority = patch.priority;
      if (Array.isArray(patch.labelIds)) issue.labelIds = patch.labelIds as string[];
      if ('assigneeId' in patch) issue.assigneeId = (patch.assigneeId as string | null) ?? null;
      return { __typename: 'IssuePayload', success: true, lastSyncId: 1, issue: { id: issue.id } };
    }
    case 'issueCreate': {
      const data = input(vars);
      const teamId = str(data.teamId);
      if (!teamId || !ws.teams.has(teamId))
        throw userError('Entity not found: Team', 'Could not find referenced Team.');
      if (!str(data.title)) throw userError('Argument Validation Error: title should not be empty');
      const parentId = str(data.parentId);
      if (parentId && !ws.findIssue(parentId))
        throw userError('Entity not found: Issue', 'Could not find the parent issue.');
      const issue = ws.addIssue({
        teamId,
        title: str(data.title) as string,
        description: str(data.description) ?? null,
        projectId: str(data.projectId) ?? null,
        parentId: parentId ? (ws.findIssue(parentId)?.id ?? null) : null,
        estimate: typeof data.estimate === 'number' ? data.estimate : null,
        priority: typeof data.priority === 'number' ? data.priority : 0,
        labelIds: Array.isArray(data.labelIds) ? (data.labelIds as string[]) : [],
        ...(str(data.stateId) ? { stateId: str(data.stateId) } : {}),
      });
      return {
        __typename: 'IssuePayload',
        success: true,
        lastSyncId: 2,
        issue: { id: issue.id, identifier: issue.identifier },
      };
    }
    case 'commentCreate': {
      const data = input(vars);
      const issue = ws.findIssue(str(data.issueId) ?? '');
      if (!issue) throw userError('Entity not found: Issue', 'Could not find referenced Issue.');
      const given = str(data.id);
      // Like Linear: a client-generated id that is already taken is refused (so a resent comment is not a copy).
      if (given && ws.comments.has(given))
        throw userError('Entity already exists', 'A comment with this id already exists.');
      const comment = ws.addComment(issue.id, str(data.body) ?? '', ws.appUser.id, str(data.parentId) ?? null, given);
      return { __typename: 'CommentPayload', success: true, lastSyncId: 3, comment: { id: comment.id } };
    }
    case 'issueRelationCreate': {
      const data = input(vars);
      const a = ws.findIssue(str(data.issueId) ?? '');
      const b = ws.findIssue(str(data.relatedIssueId) ?? '');
      if (!a || !b) throw userError('Entity not found: Issue', 'Could not find referenced Issue.');
      const id = ws.newId();
      ws.relations.set(id, { id, issueId: a.id, relatedIssueId: b.id, type: str(data.type) ?? 'related' });
      return { __typename: 'IssueRelationPayload', success: true, lastSyncId: 4, issueRelation: { id } };
    }
    case 'issueLabelCreate': {
      const data = input(vars);
      const name = str(data.name) ?? '';
      const teamId = str(data.teamId) ?? null;
      if (
        [...ws.labels.values()].some(
          (l) => l.name.toLowerCase() === name.toLowerCase() && (l.teamId === teamId || l.teamId === null),
        )
      ) {
        throw userError('duplicate label name', `A label named "${name}" already exists.`);
      }
      const id = ws.newId();
      ws.labels.set(id, { id, name, teamId });
      return { __typename: 'IssueLabelPayload', success: true, lastSyncId: 5, issueLabel: { id } };
    }
    case 'agentActivityCreate': {
      const data = input(vars);
      const session = ws.agentSessions.get(str(data.agentSessionId) ?? '');
      // Linear answers an activity on a deleted or unknown session with HTTP 200 and a user error (Cyrus #1378).
      if (!session) throw userError('Entity not found: AgentSession', 'Could not find referenced AgentSession.');
      const given = str(data.id);
      // Like Linear: a client-generated id that is already taken is refused (so a resent activity is not a copy).
      if (given && [...ws.agentSessions.values()].some((s) => s.activities.some((a) => a.id === given))) {
        throw userError('Entity already exists', 'An agent activity with this id already exists.');
      }
      const id = given ?? ws.newId();
      session.activities.push({
        id,
        content: (data.content ?? {}) as Record<string, unknown>,
        ephemeral: data.ephemeral === true,
      });
      return { __typename: 'AgentActivityPayload', success: true, lastSyncId: 6, agentActivity: { id } };
    }
    case 'agentSessionCreateOnIssue': {
      const data = input(vars);
      const issue = ws.findIssue(str(data.issueId) ?? '');
      if (!issue) throw userError('Entity not found: Issue', 'Could not find referenced Issue.');
      const id = ws.newId();
      ws.agentSessions.set(id, { id, issueId: issue.id, externalUrls: [], activities: [] });
      return { __typename: 'AgentSessionPayload', success: true, lastSyncId: 7, agentSession: { id } };
    }
    case 'agentSessionUpdate': {
      const session = ws.agentSessions.get(str(vars.id) ?? '');
      if (!session) throw userError('Entity not found: AgentSession', 'Could not find referenced AgentSession.');
      const data = input(vars);
      if (Array.isArray(data.externalUrls))
        session.externalUrls = data.externalUrls as { label: string; url: string }[];
      return { __typename: 'AgentSessionPayload', success: true, lastSyncId: 8, agentSession: { id: session.id } };
    }
    case 'attachmentCreate': {
      const data = input(vars);
      const issue = ws.findIssue(str(data.issueId) ?? '');
      if (!issue) throw userError('Entity not found: Issue', 'Could not find referenced Issue.');
      const url = str(data.url);
      const title = str(data.title);
      if (!url || !title) throw userError('Argument Validation Error: url and title are required');
      // Like Linear: the same URL on the same issue updates the attachment there (no second one).
      const known = [...ws.attachments.values()].find((a) => a.issueId === issue.id && a.url === url);
      const id = known?.id ?? str(data.id) ?? ws.newId();
      ws.attachments.set(id, { id, issueId: issue.id, url, title, subtitle: str(data.subtitle) ?? null });
      return { __typename: 'AttachmentPayload', success: true, lastSyncId: 9, attachment: { id } };
    }
    default:
      throw new FakeGraphQLError(
        `Cannot query field "${field}" on the fake Linear schema.`,
        { code: 'GRAPHQL_VALIDATION_FAILED', type: 'graphql error' },
        400,
      );
  }
}

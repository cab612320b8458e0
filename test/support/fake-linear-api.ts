// An in-memory LinearApi for pipeline tests: issues, workflow states, agent sessions, activities and comments, with
// every call recorded. Failures can be injected per method (as the real client reports them: LinearApiError).
import type {
  ActivityContent,
  ActivityOptions,
  AttachmentInput,
  CreateIssueInput,
  LinearApi,
  LinearIssue,
  LinearLabel,
  LinearProject,
  LinearUser,
  LinearWorkflowState,
  RelationType,
  UpdateIssueInput,
} from '../../src/linear/api/types.ts';
import { LinearApiError } from '../../src/linear/api/types.ts';

export interface RecordedCall {
  method: keyof LinearApi;
  args: unknown[];
}

export interface RecordedActivity {
  agentSessionId: string;
  content: ActivityContent;
  options: ActivityOptions | undefined;
}

const DEFAULT_STATES: Omit<LinearWorkflowState, 'id'>[] = [
  { name: 'Backlog', type: 'backlog' },
  { name: 'Todo', type: 'unstarted' },
  { name: 'In Progress', type: 'started' },
  { name: 'In Review', type: 'started' },
  { name: 'Done', type: 'completed' },
  { name: 'Canceled', type: 'canceled' },
];

/** Builds a complete LinearIssue from a few fields (team from the identifier's prefix). */
export function makeIssue(fields: Partial<LinearIssue> & { identifier: string }): LinearIssue {
  const key = fields.identifier.split('-')[0] ?? 'ENG';
  const slug = fields.identifier.toLowerCase();
  return {
    id: `issue-${slug}`,
    title: `Issue ${fields.identifier}`,
    description: '',
    branchName: `agent/${slug}`,
    url: `https://linear.app/acme/issue/${fields.identifier}`,
    priority: 0,
    estimate: null,
    state: { id: `${key}-state-todo`, name: 'Todo', type: 'unstarted' },
    team: { id: `team-${key}`, key, name: `Team ${key}` },
    project: null,
    parentId: null,
    assignee: null,
    delegate: null,
    labels: [],
    comments: [],
    relations: [],
    ...fields,
  };
}

/** In-memory Linear: a LinearApi that records every call. */
export class FakeLinearApi implements LinearApi {
  readonly calls: RecordedCall[] = [];
  readonly activities: RecordedActivity[] = [];
  readonly comments: { issueId: string; body: string; id: string }[] = [];
  readonly createdAgentSessions: { id: string; issueId: string }[] = [];
  /** Attachments, one per issue and URL (like Linear). */
  readonly attachments: (AttachmentInput & { id: string })[] = [];
  /** Agent sessions Linear no longer knows (activities to them fail with a user error, like a deleted session). */
  readonly deletedAgentSessions = new Set<string>();
  /** Errors thrown by the next call(s) of a method, in order. */
  readonly failures = new Map<keyof LinearApi, LinearApiError[]>();
  #issues = new Map<string, LinearIssue>();
  #states = new Map<string, LinearWorkflowState[]>();
  #counter = 0;

  /** Adds (or replaces) an issue; returns it. */
  addIssue(fields: Partial<LinearIssue> & { identifier: string }): LinearIssue {
    const issue = makeIssue(fields);
    this.#issues.set(issue.id, issue);
    return issue;
  }

  /** The current state of an issue (a copy). */
  issue(ref: string): LinearIssue {
    return structuredClone(this.#find(ref));
  }

  /** Activities posted to one agent session, in order. */
  activitiesOf(agentSessionId: string): ActivityContent[] {
    return this.activities.filter((a) => a.agentSessionId === agentSessionId).map((a) => a.content);
  }

  /** Calls of one method. */
  callsOf(method: keyof LinearApi): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  async viewer(): Promise<LinearUser> {
    this.#record('viewer', []);
    return { id: 'app-user', name: 'switchboard' };
  }

  async getIssue(idOrIdentifier: string): Promise<LinearIssue> {
    this.#record('getIssue', [idOrIdentifier]);
    return structuredClone(this.#find(idOrIdentifier));
  }

  async updateIssue(id: string, input: UpdateIssueInput): Promise<void> {
    this.#record('updateIssue', [id, input]);
    const issue = this.#find(id);
    if (input.stateId !== undefined) {
      const state = this.#teamStates(issue.team.id).find((s) => s.id === input.stateId);
      if (!state) throw new LinearApiError('user', `Entity not found: WorkflowState ${input.stateId}`);
      issue.state = state;
    }
    if (input.title !== undefined) issue.title = input.title;
    if (input.description !== undefined) issue.description = input.description;
    if (input.estimate !== undefined) issue.estimate = input.estimate;
    if (input.priority !== undefined) issue.priority = input.priority;
  }

  async createIssue(input: CreateIssueInput): Promise<{ id: string; identifier: string }> {
    this.#record('createIssue', [input]);
    const team = [...this.#issues.values()].find((i) => i.team.id === input.teamId)?.team ?? {
      id: input.teamId,
      key: 'NEW',
      name: 'New',
    };
    this.#counter += 1;
    const issue = this.addIssue({
      identifier: `${team.key}-${900 + this.#counter}`,
      title: input.title,
      description: input.description ?? '',
      team,
    });
    return { id: issue.id, identifier: issue.identifier };
  }

  async createComment(issueId: string, body: string, options?: { parentId?: string }): Promise<{ id: string }> {
    this.#record('createComment', [issueId, body, options]);
    this.#find(issueId);
    this.#counter += 1;
    const id = `comment-${this.#counter}`;
    this.comments.push({ issueId, body, id });
    return { id };
  }

  async createRelation(issueId: string, relatedIssueId: string, type: RelationType): Promise<{ id: string }> {
    this.#record('createRelation', [issueId, relatedIssueId, type]);
    this.#counter += 1;
    return { id: `relation-${this.#counter}` };
  }

  async teamStates(teamId: string): Promise<LinearWorkflowState[]> {
    this.#record('teamStates', [teamId]);
    return structuredClone(this.#teamStates(teamId));
  }

  async teamLabels(teamId: string): Promise<LinearLabel[]> {
    this.#record('teamLabels', [teamId]);
    return [];
  }

  async createLabel(teamId: string, name: string): Promise<LinearLabel> {
    this.#record('createLabel', [teamId, name]);
    this.#counter += 1;
    return { id: `label-${this.#counter}`, name };
  }

  async getProject(id: string): Promise<LinearProject> {
    this.#record('getProject', [id]);
    throw new LinearApiError('user', `Entity not found: Project ${id}`);
  }

  async createAgentActivity(
    agentSessionId: string,
    content: ActivityContent,
    options?: ActivityOptions,
  ): Promise<{ id: string }> {
    this.#record('createAgentActivity', [agentSessionId, content, options]);
    if (this.deletedAgentSessions.has(agentSessionId))
      throw new LinearApiError('user', 'Entity not found: AgentSession');
    this.activities.push({ agentSessionId, content: structuredClone(content), options });
    this.#counter += 1;
    return { id: `activity-${this.#counter}` };
  }

  async createAgentSessionOnIssue(issueId: string): Promise<{ id: string }> {
    this.#record('createAgentSessionOnIssue', [issueId]);
    this.#find(issueId);
    this.#counter += 1;
    const id = `agent-session-${this.#counter}`;
    this.createdAgentSessions.push({ id, issueId });
    return { id };
  }

  async updateAgentSession(
    agentSessionId: string,
    input: { externalUrls?: { label: string; url: string }[] },
  ): Promise<void> {
    this.#record('updateAgentSession', [agentSessionId, input]);
  }

  async createAttachment(input: AttachmentInput): Promise<{ id: string }> {
    this.#record('createAttachment', [input]);
    this.#find(input.issueId);
    const known = this.attachments.find((a) => a.issueId === input.issueId && a.url === input.url);
    if (known) return { id: known.id };
    this.#counter += 1;
    const id = input.id ?? `attachment-${this.#counter}`;
    this.attachments.push({ ...input, id });
    return { id };
  }

  #record(method: keyof LinearApi, args: unknown[]): void {
    this.calls.push({ method, args: structuredClone(args) });
    const queued = this.failures.get(method);
    const failure = queued?.shift();
    if (failure) throw failure;
  }

  #find(ref: string): LinearIssue {
    const issue = this.#issues.get(ref) ?? [...this.#issues.values()].find((i) => i.identifier === ref);
    if (!issue) throw new LinearApiError('user', `Entity not found: Issue ${ref}`);
    return issue;
  }

  #teamStates(teamId: string): LinearWorkflowState[] {
    let states = this.#states.get(teamId);
    if (!states) {
      states = DEFAULT_STATES.map((s, i) => ({ ...s, id: `${teamId}-state-${i}` }));
      this.#states.set(teamId, states);
    }
    return states;
  }
}

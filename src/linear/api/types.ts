// The contract between the Linear pipeline (dispatch, planner, triage, mentions) and the Linear API. linear/api/
// implements it over @linear/sdk; the pipeline and its tests use only these plain types, never SDK models.

/** Content of an agent activity in a Linear agent session. */
export type ActivityContent =
  | { type: 'thought'; body: string }
  | { type: 'action'; action: string; parameter: string; result?: string }
  | { type: 'response'; body: string }
  | { type: 'elicitation'; body: string }
  | { type: 'error'; body: string };

export interface ActivityOptions {
  /** Ephemeral activities are replaced by the next one (progress lines). */
  ephemeral?: boolean;
  /** A client-generated id (UUID v4): Linear refuses a second activity with it, so a resend after a crash is not a copy. */
  id?: string;
}

/** Options of a new comment. */
export interface CommentOptions {
  /** Makes it a reply in that comment's thread. */
  parentId?: string;
  /** A client-generated id (UUID v4): Linear refuses a second comment with it. */
  id?: string;
}

export interface LinearUser {
  id: string;
  name: string;
}

export interface LinearLabel {
  id: string;
  name: string;
}

export interface LinearWorkflowState {
  id: string;
  name: string;
  /** backlog | unstarted | started | completed | canceled | triage */
  type: string;
}

export interface LinearComment {
  id: string;
  body: string;
  user: LinearUser | null;
  createdAt: string;
}

export type RelationType = 'blocks' | 'related' | 'duplicate';

export interface LinearRelation {
  id: string;
  /** Seen from this issue: blocks | related | duplicate | similar, or blocked_by / duplicated_by for the inverse side. */
  type: string;
  /** The issue on the other side. */
  relatedIssueId: string;
  relatedIdentifier: string;
}

/** An issue with what dispatch, audit, triage and planning read. */
export interface LinearIssue {
  id: string;
  identifier: string;
  title: string;
  description: string;
  /** Linear's suggested git branch name for the issue. */
  branchName: string;
  url: string;
  priority: number;
  estimate: number | null;
  state: LinearWorkflowState | null;
  team: { id: string; key: string; name: string };
  project: { id: string; name: string } | null;
  parentId: string | null;
  assignee: LinearUser | null;
  delegate: LinearUser | null;
  labels: LinearLabel[];
  /** The most recent comments, oldest first (at most 10). */
  comments: LinearComment[];
  relations: LinearRelation[];
}

export interface LinearProject {
  id: string;
  name: string;
  description: string;
  teamIds: string[];
  /** Every issue of the project; these carry no comments (`comments` is empty — use getIssue for them). */
  issues: LinearIssue[];
}

export interface CreateIssueInput {
  teamId: string;
  title: string;
  description?: string;
  projectId?: string;
  parentId?: string;
  estimate?: number;
  priority?: number;
  labelIds?: string[];
  stateId?: string;
}

export interface UpdateIssueInput {
  title?: string;
  description?: string;
  stateId?: string;
  estimate?: number | null;
  priority?: number;
  labelIds?: string[];
  assigneeId?: string | null;
}

/**
 * The Linear operations switchboard uses. Every method throws a LinearApiError on failure; user errors (GraphQL
 * errors marked as user errors, even over HTTP 200) are final and never retried.
 */
export interface LinearApi {
  /** The app user the token acts as. */
  viewer(): Promise<LinearUser>;
  getIssue(idOrIdentifier: string): Promise<LinearIssue>;
  updateIssue(id: string, input: UpdateIssueInput): Promise<void>;
  createIssue(input: CreateIssueInput): Promise<{ id: string; identifier: string }>;
  createComment(issueId: string, body: string, options?: CommentOptions): Promise<{ id: string }>;
  createRelation(issueId: string, relatedIssueId: string, type: RelationType): Promise<{ id: string }>;
  teamStates(teamId: string): Promise<LinearWorkflowState[]>;
  teamLabels(teamId: string): Promise<LinearLabel[]>;
  createLabel(teamId: string, name: string): Promise<LinearLabel>;
  getProject(id: string): Promise<LinearProject>;
  createAgentActivity(
    agentSessionId: string,
    content: ActivityContent,
    options?: ActivityOptions,
  ): Promise<{ id: string }>;
  createAgentSessionOnIssue(issueId: string): Promise<{ id: string }>;
  updateAgentSession(agentSessionId: string, input: { externalUrls?: { label: string; url: string }[] }): Promise<void>;
  /** Links a URL (a pull request) to an issue; Linear keeps one attachment per issue and URL (a repeat updates it). */
  createAttachment(input: AttachmentInput): Promise<{ id: string }>;
}

/** An attachment of an issue: a link with a title (and subtitle); `id` is a client-generated id (a keyed effect). */
export interface AttachmentInput {
  issueId: string;
  url: string;
  title: string;
  subtitle?: string;
  id?: string;
}

/** Why a Linear call failed. */
export type LinearErrorKind = 'user' | 'auth' | 'rate_limit' | 'network' | 'server';

/** A failed Linear call. `retryable` is false for user errors and for auth errors that survived one refresh. */
export class LinearApiError extends Error {
  readonly kind: LinearErrorKind;
  readonly retryable: boolean;

  constructor(kind: LinearErrorKind, message: string) {
    super(message);
    this.name = 'LinearApiError';
    this.kind = kind;
    this.retryable = kind === 'rate_limit' || kind === 'network' || kind === 'server';
  }
}

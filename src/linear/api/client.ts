// LinearApi over @linear/sdk: the SDK model API for simple mutations and `viewer`, raw documents through the SDK's
// GraphQL client for one-request reads, sub-issue creation and agent activities.
import { IssueRelationType } from '@linear/sdk';
import {
  AGENT_ACTIVITY_CREATE_MUTATION,
  ATTACHMENT_CREATE_MUTATION,
  IDENTITY_QUERY,
  ISSUE_CREATE_MUTATION,
  ISSUE_QUERY,
  PROJECT_QUERY,
  TEAM_LABELS_QUERY,
  TEAM_STATES_QUERY,
} from './documents.ts';
import {
  agentActivityCreateResult,
  attachmentCreateResult,
  identityResult,
  issueCreateResult,
  issueQueryResult,
  parseData,
  projectQueryResult,
  teamLabelsResult,
  teamStatesResult,
  toIssue,
  toLabels,
  toStates,
} from './mappers.ts';
import type { TokenIdentity } from './oauth.ts';
import type { LinearTransport } from './transport.ts';
import type {
  ActivityContent,
  ActivityOptions,
  AttachmentInput,
  CommentOptions,
  CreateIssueInput,
  LinearApi,
  LinearIssue,
  LinearLabel,
  LinearProject,
  LinearUser,
  LinearWorkflowState,
  RelationType,
  UpdateIssueInput,
} from './types.ts';
import { LinearApiError } from './types.ts';

const RELATION_TYPES: Record<RelationType, IssueRelationType> = {
  blocks: IssueRelationType.Blocks,
  related: IssueRelationType.Related,
  duplicate: IssueRelationType.Duplicate,
};

/** Project issues are read in pages of 50; a project larger than this many pages is refused rather than truncated. */
const MAX_PROJECT_PAGES = 40;

function requireId(operation: string, success: boolean, id: string | undefined | null): string {
  if (!success || !id)
    throw new LinearApiError('user', `${operation}: Linear reported success=${success} without an id`);
  return id;
}

/** The LinearApi of one workspace. */
export class LinearSdkApi implements LinearApi {
  #t: LinearTransport;
  #viewer: LinearUser | undefined;

  constructor(transport: LinearTransport) {
    this.#t = transport;
  }

  /** The app user; asked once, then remembered for the life of this object. */
  async viewer(): Promise<LinearUser> {
    if (this.#viewer) return this.#viewer;
    const user = await this.#t.run('viewer', (c) => c.viewer);
    this.#viewer = { id: user.id, name: user.name };
    return this.#viewer;
  }

  /** The app user and workspace of the current token (one request); for `linear status` and the OAuth install. */
  async identity(): Promise<TokenIdentity> {
    const data = parseData('identity', identityResult, await this.#t.request('identity', IDENTITY_QUERY, {}));
    return {
      appUserId: data.viewer.id,
      appUserName: data.viewer.name,
      organizationId: data.organization.id,
      organizationName: data.organization.name,
    };
  }

  async getIssue(idOrIdentifier: string): Promise<LinearIssue> {
    const data = parseData(
      'issue',
      issueQueryResult,
      await this.#t.request('issue', ISSUE_QUERY, { id: idOrIdentifier }),
    );
    return toIssue(data.issue, data.issue.comments.nodes);
  }

  async updateIssue(id: string, input: UpdateIssueInput): Promise<void> {
    const payload = await this.#t.run('issueUpdate', (c) => c.updateIssue(id, input));
    if (!payload.success) throw new LinearApiError('user', `issueUpdate: Linear reported success=false for ${id}`);
  }

  async createIssue(input: CreateIssueInput): Promise<{ id: string; identifier: string }> {
    // Sub-issues need the sub_issues feature flag on the request.
    const headers = input.parentId ? { 'GraphQL-Features': 'sub_issues' } : undefined;
    const raw = await this.#t.request('issueCreate', ISSUE_CREATE_MUTATION, { input }, headers);
    const { issueCreate } = parseData('issueCreate', issueCreateResult, raw);
    const id = requireId('issueCreate', issueCreate.success, issueCreate.issue?.id);
    return { id, identifier: issueCreate.issue?.identifier ?? id };
  }

  async createComment(issueId: string, body: string, options?: CommentOptions): Promise<{ id: string }> {
    const input = {
      issueId,
      body,
      ...(options?.parentId ? { parentId: options.parentId } : {}),
      ...(options?.id ? { id: options.id } : {}),
    };
    const payload = await this.#t.run('commentCreate', (c) => c.createComment(input));
    return { id: requireId('commentCreate', payload.success, payload.commentId) };
  }

  async createRelation(issueId: string, relatedIssueId: string, type: RelationType): Promise<{ id: string }> {
    const payload = await this.#t.run('issueRelationCreate', (c) =>
      c.createIssueRelation({ issueId, relatedIssueId, type: RELATION_TYPES[type] }),
    );
    return { id: requireId('issueRelationCreate', payload.success, payload.issueRelationId) };
  }

  async teamStates(teamId: string): Promise<LinearWorkflowState[]> {
    return toStates(
      parseData(
        'team.states',
        teamStatesResult,
        await this.#t.request('team.states', TEAM_STATES_QUERY, { id: teamId }),
      ),
    );
  }

  /** The labels usable on the team's issues: the team's own and the workspace-wide ones. */
  async teamLabels(teamId: string): Promise<LinearLabel[]> {
    return toLabels(
      parseData('issueLabels', teamLabelsResult, await this.#t.request('issueLabels', TEAM_LABELS_QUERY, { teamId })),
    );
  }

  async createLabel(teamId: string, name: string): Promise<LinearLabel> {
    const payload = await this.#t.run('issueLabelCreate', (c) => c.createIssueLabel({ teamId, name }));
    return { id: requireId('issueLabelCreate', payload.success, payload.issueLabelId), name };
  }

  /** The project with all its issues (paged; project issues carry no comments — use getIssue for those). */
  async getProject(id: string): Promise<LinearProject> {
    let after: string | null = null;
    const issues: LinearIssue[] = [];
    for (let page = 0; page < MAX_PROJECT_PAGES; page += 1) {
      const raw = await this.#t.request('project', PROJECT_QUERY, { id, after });
      const { project } = parseData('project', projectQueryResult, raw);
      issues.push(...project.issues.nodes.map((issue) => toIssue(issue)));
      if (!project.issues.pageInfo.hasNextPage || !project.issues.pageInfo.endCursor) {
        return {
          id: project.id,
          name: project.name,
          description: project.description ?? '',
          teamIds: project.teams.nodes.map((t) => t.id),
          issues,
        };
      }
      after = project.issues.pageInfo.endCursor;
    }
    throw new LinearApiError(
      'user',
      `project ${id} has more than ${MAX_PROJECT_PAGES * 50} issues; refusing to read it whole`,
    );
  }

  async createAgentActivity(
    agentSessionId: string,
    content: ActivityContent,
    options?: ActivityOptions,
  ): Promise<{ id: string }> {
    if (options?.ephemeral && content.type !== 'thought' && content.type !== 'action') {
      throw new LinearApiError(
        'user',
        `agentActivityCreate: only thought and action activities can be ephemeral, not ${content.type}`,
      );
    }
    const input: Record<string, unknown> = { agentSessionId, content };
    if (options?.ephemeral) input.ephemeral = true;
    if (options?.id) input.id = options.id;
    const raw = await this.#t.request('agentActivityCreate', AGENT_ACTIVITY_CREATE_MUTATION, { input });
    const { agentActivityCreate } = parseData('agentActivityCreate', agentActivityCreateResult, raw);
    return { id: requireId('agentActivityCreate', agentActivityCreate.success, agentActivityCreate.agentActivity?.id) };
  }

  async createAgentSessionOnIssue(issueId: string): Promise<{ id: string }> {
    const payload = await this.#t.run('agentSessionCreateOnIssue', (c) => c.agentSessionCreateOnIssue({ issueId }));
    return { id: requireId('agentSessionCreateOnIssue', payload.success, payload.agentSessionId) };
  }

  async updateAgentSession(
    agentSessionId: string,
    input: { externalUrls?: { label: string; url: string }[] },
  ): Promise<void> {
    const payload = await this.#t.run('agentSessionUpdate', (c) =>
      c.updateAgentSession(agentSessionId, input.externalUrls ? { externalUrls: input.externalUrls } : {}),
    );
    if (!payload.success)
      throw new LinearApiError('user', `agentSessionUpdate: Linear reported success=false for ${agentSessionId}`);
  }

  async createAttachment(input: AttachmentInput): Promise<{ id: string }> {
    const raw = await this.#t.request('attachmentCreate', ATTACHMENT_CREATE_MUTATION, { input: { ...input } });
    const { attachmentCreate } = parseData('attachmentCreate', attachmentCreateResult, raw);
    return { id: requireId('attachmentCreate', attachmentCreate.success, attachmentCreate.attachment?.id) };
  }
}

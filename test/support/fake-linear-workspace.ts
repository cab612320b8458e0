// The in-memory workspace behind the fake Linear server (test/support/fake-linear.ts): organization, users (with the
// app user), teams, workflow states, labels, projects, issues with identifiers and branch names, comments, relations
// and agent sessions. The seed uses the ids the webhook fixtures (test/fixtures/linear/*.json) refer to.

/** Ids shared by the fake workspace and the webhook fixtures. */
export const FAKE_IDS = {
  organization: '6a1e4b7c-1f2d-4c3b-9a8e-0d1c2b3a4f50',
  appUser: 'b7e2c1d4-5a6f-4e3d-8c2b-1a0f9e8d7c61',
  human: '3c9d8e7f-6a5b-4c4d-9e3f-2a1b0c9d8e72',
  team: 'e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a83',
  project: '2b3c4d5e-6f70-4819-8a2b-3c4d5e6f7081',
  issue1: 'f4e3d2c1-b0a9-4f8e-9d7c-6b5a4f3e2d94',
  issue2: '0a1b2c3d-4e5f-4607-8819-2a3b4c5d6e7f',
  comment1: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b',
  agentSession: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7ba5',
  oauthClient: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
  webhook: '0e1d2c3b-4a59-4687-9766-85a4b3c2d1e0',
} as const;

export interface FakeUser {
  id: string;
  name: string;
  displayName: string;
  email: string;
  app: boolean;
}
export interface FakeTeam {
  id: string;
  key: string;
  name: string;
}
export interface FakeState {
  id: string;
  name: string;
  type: string;
  teamId: string;
}
export interface FakeLabel {
  id: string;
  name: string;
  teamId: string | null;
}
export interface FakeProject {
  id: string;
  name: string;
  description: string;
  teamIds: string[];
}
export interface FakeIssue {
  id: string;
  number: number;
  identifier: string;
  title: string;
  description: string | null;
  branchName: string;
  teamId: string;
  stateId: string;
  projectId: string | null;
  parentId: string | null;
  assigneeId: string | null;
  delegateId: string | null;
  labelIds: string[];
  priority: number;
  estimate: number | null;
  createdAt: string;
}
export interface FakeComment {
  id: string;
  issueId: string;
  body: string;
  userId: string | null;
  parentId: string | null;
  createdAt: string;
}
export interface FakeRelation {
  id: string;
  issueId: string;
  relatedIssueId: string;
  type: string;
}
export interface FakeActivity {
  id: string;
  content: Record<string, unknown>;
  ephemeral: boolean;
}
/** An attachment (a link) of an issue; Linear keeps one per issue and URL. */
export interface FakeAttachment {
  id: string;
  issueId: string;
  url: string;
  title: string;
  subtitle: string | null;
}

export interface FakeAgentSession {
  id: string;
  issueId: string | null;
  externalUrls: { label: string; url: string }[];
  activities: FakeActivity[];
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
}

/** The mutable workspace; tests read and change it directly. */
export class FakeWorkspace {
  organization = { id: FAKE_IDS.organization, name: 'Acme', urlKey: 'acme' };
  users = new Map<string, FakeUser>();
  teams = new Map<string, FakeTeam>();
  states = new Map<string, FakeState>();
  labels = new Map<string, FakeLabel>();
  projects = new Map<string, FakeProject>();
  issues = new Map<string, FakeIssue>();
  comments = new Map<string, FakeComment>();
  relations = new Map<string, FakeRelation>();
  agentSessions = new Map<string, FakeAgentSession>();
  attachments = new Map<string, FakeAttachment>();
  #seq = 0;
  #clock = Date.parse('2026-03-01T09:00:00.000Z');

  constructor() {
    this.#seed();
  }

  /** A fresh UUID-shaped id. */
  newId(): string {
    this.#seq += 1;
    return `00000000-0000-4000-8000-${this.#seq.toString().padStart(12, '0')}`;
  }

  /** Increasing ISO timestamps, so ordering by createdAt is deterministic. */
  nextTimestamp(): string {
    this.#clock += 60_000;
    return new Date(this.#clock).toISOString();
  }

  get appUser(): FakeUser {
    return this.users.get(FAKE_IDS.appUser) as FakeUser;
  }

  /** Looks an issue up by id or identifier (ENG-1). */
  findIssue(idOrIdentifier: string): FakeIssue | undefined {
    const direct = this.issues.get(idOrIdentifier);
    if (direct) return direct;
    for (const issue of this.issues.values()) if (issue.identifier === idOrIdentifier.toUpperCase()) return issue;
    return undefined;
  }

  /** Adds an issue with the next identifier of its team and Linear's branch name pattern. */
  addIssue(
    input: { teamId: string; title: string; id?: string } & Partial<
      Omit<FakeIssue, 'number' | 'identifier' | 'branchName'>
    >,
  ): FakeIssue {
    const team = this.teams.get(input.teamId);
    if (!team) throw new Error(`no team ${input.teamId}`);
    const number = [...this.issues.values()].filter((i) => i.teamId === team.id).length + 1;
    const backlog = [...this.states.values()].find((s) => s.teamId === team.id && s.type === 'backlog');
    const issue: FakeIssue = {
      id: input.id ?? this.newId(),
      number,
      identifier: `${team.key}-${number}`,
      title: input.title,
      description: input.description ?? null,
      branchName: `ada/${team.key.toLowerCase()}-${number}-${slug(input.title)}`,
      teamId: team.id,
      stateId: input.stateId ?? backlog?.id ?? '',
      projectId: input.projectId ?? null,
      parentId: input.parentId ?? null,
      assigneeId: input.assigneeId ?? null,
      delegateId: input.delegateId ?? null,
      labelIds: input.labelIds ?? [],
      priority: input.priority ?? 0,
      estimate: input.estimate ?? null,
      createdAt: input.createdAt ?? this.nextTimestamp(),
    };
    this.issues.set(issue.id, issue);
    return issue;
  }

  addComment(
    issueId: string,
    body: string,
    userId: string | null,
    parentId: string | null = null,
    id?: string,
  ): FakeComment {
    const comment: FakeComment = {
      id: id ?? this.newId(),
      issueId,
      body,
      userId,
      parentId,
      createdAt: this.nextTimestamp(),
    };
    this.comments.set(comment.id, comment);
    return comment;
  }

  userJson(id: string | null): Record<string, unknown> | null {
    const user = id ? this.users.get(id) : undefined;
    if (!user) return null;
    return {
      __typename: 'User',
      id: user.id,
      name: user.name,
      displayName: user.displayName,
      email: user.email,
      app: user.app,
      active: true,
      isMe: user.id === FAKE_IDS.appUser,
    };
  }

  /** An issue as the GraphQL API shows it (a superset of what any query here selects). */
  issueJson(issue: FakeIssue, withComments = true): Record<string, unknown> {
    const state = this.states.get(issue.stateId);
    const team = this.teams.get(issue.teamId) as FakeTeam;
    const project = issue.projectId ? this.projects.get(issue.projectId) : undefined;
    const relations = [...this.relations.values()].filter((r) => r.issueId === issue.id);
    const inverse = [...this.relations.values()].filter((r) => r.relatedIssueId === issue.id);
    const ref = (id: string) => {
      const other = this.issues.get(id);
      return { id, identifier: other?.identifier ?? '' };
    };
    const out: Record<string, unknown> = {
      __typename: 'Issue',
      id: issue.id,
      identifier: issue.identifier,
      number: issue.number,
      title: issue.title,
      description: issue.description,
      branchName: issue.branchName,
      url: `https://linear.app/${this.organization.urlKey}/issue/${issue.identifier}/${slug(issue.title)}`,
      priority: issue.priority,
      estimate: issue.estimate,
      createdAt: issue.createdAt,
      state: state ? { id: state.id, name: state.name, type: state.type } : null,
      team: { id: team.id, key: team.key, name: team.name },
      project: project ? { id: project.id, name: project.name } : null,
      parent: issue.parentId ? { id: issue.parentId } : null,
      assignee: this.userJson(issue.assigneeId),
      delegate: this.userJson(issue.delegateId),
      labels: {
        nodes: issue.labelIds
          .map((id) => this.labels.get(id))
          .filter((l) => l !== undefined)
          .map((l) => ({ id: l.id, name: l.name })),
      },
      relations: { nodes: relations.map((r) => ({ id: r.id, type: r.type, relatedIssue: ref(r.relatedIssueId) })) },
      inverseRelations: { nodes: inverse.map((r) => ({ id: r.id, type: r.type, issue: ref(r.issueId) })) },
    };
    if (withComments) {
      const comments = [...this.comments.values()].filter((c) => c.issueId === issue.id).slice(-10);
      out.comments = {
        nodes: comments.map((c) => ({ id: c.id, body: c.body, createdAt: c.createdAt, user: this.userJson(c.userId) })),
      };
    }
    return out;
  }

  #seed(): void {
    this.users.set(FAKE_IDS.appUser, {
      id: FAKE_IDS.appUser,
      name: 'switchboard',
      displayName: 'switchboard',
      email: 'switchboard@oauthapp.linear.app',
      app: true,
    });
    this.users.set(FAKE_IDS.human, {
      id: FAKE_IDS.human,
      name: 'Ada Lovelace',
      displayName: 'ada',
      email: 'ada@acme.test',
      app: false,
    });
    this.teams.set(FAKE_IDS.team, { id: FAKE_IDS.team, key: 'ENG', name: 'Engineering' });
    const states: [string, string][] = [
      ['Triage', 'triage'],
      ['Backlog', 'backlog'],
      ['Todo', 'unstarted'],
      ['In Progress', 'started'],
      ['In Review', 'started'],
      ['Done', 'completed'],
      ['Canceled', 'canceled'],
    ];
    for (const [name, type] of states) {
      const id = this.newId();
      this.states.set(id, { id, name, type, teamId: FAKE_IDS.team });
    }
    for (const [name, teamId] of [
      ['Bug', FAKE_IDS.team],
      ['Feature', FAKE_IDS.team],
      ['Security', null],
    ] as const) {
      const id = this.newId();
      this.labels.set(id, { id, name, teamId });
    }
    this.projects.set(FAKE_IDS.project, {
      id: FAKE_IDS.project,
      name: 'Launch',
      description: 'Ship the first public release.',
      teamIds: [FAKE_IDS.team],
    });
    const bug = [...this.labels.values()].find((l) => l.name === 'Bug') as FakeLabel;
    const one = this.addIssue({
      id: FAKE_IDS.issue1,
      teamId: FAKE_IDS.team,
      title: 'Fix login redirect loop',
      description: 'Users bounce between /login and /home after SSO.',
      projectId: FAKE_IDS.project,
      labelIds: [bug.id],
      priority: 2,
      estimate: 3,
    });
    const two = this.addIssue({
      id: FAKE_IDS.issue2,
      teamId: FAKE_IDS.team,
      title: 'Add audit log',
      projectId: FAKE_IDS.project,
      priority: 3,
    });
    this.addComment(one.id, 'Seen on Safari only.', FAKE_IDS.human, null, FAKE_IDS.comment1);
    const relationId = this.newId();
    this.relations.set(relationId, { id: relationId, issueId: one.id, relatedIssueId: two.id, type: 'blocks' });
    this.agentSessions.set(FAKE_IDS.agentSession, {
      id: FAKE_IDS.agentSession,
      issueId: one.id,
      externalUrls: [],
      activities: [],
    });
  }
}

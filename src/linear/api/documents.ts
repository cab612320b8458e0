// Raw GraphQL documents, used where one request beats the SDK model API's one-request-per-relation reads, or where the
// model API cannot say it (ephemeral activities, the sub_issues feature header).

const ISSUE_CORE = `
  id identifier title description branchName url priority estimate
  state { id name type }
  team { id key name }
  project { id name }
  parent { id }
  assignee { id name }
  delegate { id name }
  labels(first: 50) { nodes { id name } }
  relations(first: 50) { nodes { id type relatedIssue { id identifier } } }
  inverseRelations(first: 50) { nodes { id type issue { id identifier } } }`;

export const ISSUE_QUERY = `query SwitchboardIssue($id: String!) {
  issue(id: $id) {${ISSUE_CORE}
    comments(last: 10) { nodes { id body createdAt user { id name } } }
  }
}`;

export const PROJECT_QUERY = `query SwitchboardProject($id: String!, $after: String) {
  project(id: $id) {
    id name description
    teams(first: 50) { nodes { id } }
    issues(first: 50, after: $after) {
      nodes {${ISSUE_CORE}
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

export const TEAM_STATES_QUERY = `query SwitchboardTeamStates($id: String!) {
  team(id: $id) { states(first: 100) { nodes { id name type } } }
}`;

export const TEAM_LABELS_QUERY = `query SwitchboardTeamLabels($teamId: ID!) {
  issueLabels(first: 250, filter: { or: [{ team: { id: { eq: $teamId } } }, { team: { null: true } }] }) { nodes { id name } }
}`;

export const ISSUE_CREATE_MUTATION = `mutation SwitchboardIssueCreate($input: IssueCreateInput!) {
  issueCreate(input: $input) { success issue { id identifier } }
}`;

export const AGENT_ACTIVITY_CREATE_MUTATION = `mutation SwitchboardAgentActivityCreate($input: AgentActivityCreateInput!) {
  agentActivityCreate(input: $input) { success agentActivity { id } }
}`;

export const ATTACHMENT_CREATE_MUTATION = `mutation SwitchboardAttachmentCreate($input: AttachmentCreateInput!) {
  attachmentCreate(input: $input) { success attachment { id } }
}`;

export const IDENTITY_QUERY = `query SwitchboardIdentity {
  viewer { id name }
  organization { id name }
}`;

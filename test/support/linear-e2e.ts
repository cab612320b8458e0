import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import type { Kysely } from 'kysely';
import { ApprovalDesk } from '../../src/approvals/desk.ts';
import type { SessionManager } from '../../src/coding/session-manager.ts';
import { workspaceRoot } from '../../src/coding/workspace.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Config } from '../../src/core/config.ts';
import { loadConfig } from '../../src/core/config-load.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { registerLinearRoutes } from '../../src/gateway/linear-routes.ts';
import type { LinearIntegration } from '../../src/linear/integration.ts';
import { createLinearIntegration } from '../../src/linear/integration.ts';
import type { DispatchPullRequests } from '../../src/linear/pipeline/deliver.ts';
import type { DatabaseSync } from '../../src/store/database.ts';
import { sqliteKysely } from '../../src/store/kysely/connection.ts';
import type { Database } from '../../src/store/tables/index.ts';
import type { FakeLinear } from './fake-linear.ts';
import { FAKE_IDS, startFakeLinear } from './fake-linear.ts';
import type { FakeIssue, FakeWorkspace } from './fake-linear-workspace.ts';
import { initRepo } from './git-repo.ts';
import { linearFixture, signLinearWebhook, TEST_WEBHOOK_SECRET } from './linear-webhook-fixtures.ts';
import { REPLAY_PROMPTS } from './pipeline-fixture.ts';
import { RecordingOutbox } from './recording-outbox.ts';
import { ScriptedInference } from './scripted-inference.ts';
// The Linear integration end to end in one process: the real HTTP route (Fastify + registerLinearRoutes), signed
// webhooks, the fake Linear server behind the real @linear/sdk, the real pipeline, router, planner and SessionManager
// running the fake agent executables in a real git repository, and a recording outbox for the chat channel. Time is a
// ManualClock (watchdogs); tests wait for real processes with `waitFor`.
import { sessionManagerIn } from './session-manager-in.ts';
import { tempDir } from './temp-dir.ts';

const fake = (name: string): string => fileURLToPath(new URL(`./${name}`, import.meta.url));

/** The chat the pipeline's notifications go to. */
export const CHAT = 'telegram|42';

/** Adds a team with Linear's usual workflow states; returns its id. Audit replays are chosen by team key. */
export function addTeam(ws: FakeWorkspace, key: string): string {
  const id = ws.newId();
  ws.teams.set(id, { id, key, name: `Team ${key}` });
  for (const [name, type] of [
    ['Backlog', 'backlog'],
    ['Todo', 'unstarted'],
    ['In Progress', 'started'],
    ['Done', 'completed'],
    ['Canceled', 'canceled'],
  ] as const) {
    const stateId = ws.newId();
    ws.states.set(stateId, { id: stateId, name, type, teamId: id });
  }
  return id;
}

/** The config of a daemon wired to the fake Linear, the fake agents and the repository `repo` (plain JSON). */
export function linearDaemonConfig(options: {
  dir: string;
  repo: string;
  linearUrl: string;
  agentLog: string;
  originChannel?: string;
}): Record<string, unknown> {
  return {
    workspaces: [options.dir],
    timings: { killGraceMs: 2_000 },
    harnesses: {
      claude: {
        executable: fake('fake-claude.mjs'),
        settingSources: ['project'],
        env: { FAKE_AGENT_LOG: options.agentLog },
      },
      gemini: { executable: fake('fake-gemini.mjs'), env: { FAKE_AGENT_LOG: options.agentLog } },
      codex: {
        executable: fake('fake-codex.mjs'),
        env: { FAKE_AGENT_LOG: options.agentLog, CODEX_HOME: join(options.dir, 'codex-home') },
      },
    },
    linear: {
      enabled: true,
      apiUrl: options.linearUrl,
      apiKey: 'lin_api_fake',
      webhookSecret: TEST_WEBHOOK_SECRET,
      requests: { backoffInitialMs: 10, backoffMaxMs: 100, maxAttempts: 3 },
      // batchMs 0: the in-process rig runs on a ManualClock (a batch window would wait for it to be advanced).
      webhooks: { retryInitialMs: 200, retryMaxMs: 1_000, batchMs: 0 },
      pipeline: { repo: options.repo, maxAttempts: 2, originChannel: options.originChannel ?? CHAT },
      router: { retryInitialSec: 1 },
    },
  };
}

/** Makes a git repository whose audits replay captured verdicts (REPLAY_PROMPTS). */
export function replayRepo(path: string): string {
  initRepo(path);
  mkdirSync(join(path, '.switchboard'), { recursive: true });
  writeFileSync(join(path, '.switchboard', 'prompts.yaml'), REPLAY_PROMPTS);
  return path;
}

/** An AgentSessionEvent `created` for `issue` (a new agent session in the fake workspace), from the fixture's shape. */
export function agentSessionCreated(
  ws: FakeWorkspace,
  issue: FakeIssue,
  body: string,
): { payload: Record<string, unknown>; agentSessionId: string } {
  const agentSessionId = ws.newId();
  ws.agentSessions.set(agentSessionId, { id: agentSessionId, issueId: issue.id, externalUrls: [], activities: [] });
  const payload = linearFixture('agent-session-created');
  const team = ws.teams.get(issue.teamId);
  const commentId = ws.addComment(issue.id, body, FAKE_IDS.human).id;
  const ref = {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    teamId: issue.teamId,
    team: { id: issue.teamId, key: team?.key, name: team?.name },
  };
  payload.agentSession = {
    ...(payload.agentSession as Record<string, unknown>),
    id: agentSessionId,
    issueId: issue.id,
    issue: ref,
    commentId,
    comment: { id: commentId, body, userId: FAKE_IDS.human, issueId: issue.id },
  };
  payload.promptContext = `<issue identifier="${issue.identifier}"><title>${issue.title}</title></issue>`;
  return { payload, agentSessionId };
}

/** A person's prompt in an agent session (a new activity id each call), from the fixture's shape. */
export function agentSessionPrompted(
  ws: FakeWorkspace,
  issue: FakeIssue,
  agentSessionId: string,
  body: string,
): Record<string, unknown> {
  const payload = linearFixture('agent-session-prompted');
  payload.agentSession = {
    ...(payload.agentSession as Record<string, unknown>),
    id: agentSessionId,
    issueId: issue.id,
    issue: { id: issue.id, identifier: issue.identifier, title: issue.title },
  };
  const activity = payload.agentActivity as Record<string, unknown>;
  payload.agentActivity = {
    ...activity,
    id: ws.newId(),
    agentSessionId,
    sourceCommentId: null,
    content: { type: 'prompt', body },
  };
  return payload;
}

/** A stop signal for an agent session, from the fixture's shape. */
export function agentSessionStop(ws: FakeWorkspace, issue: FakeIssue, agentSessionId: string): Record<string, unknown> {
  const payload = linearFixture('agent-session-stop');
  payload.agentSession = {
    ...(payload.agentSession as Record<string, unknown>),
    id: agentSessionId,
    issueId: issue.id,
    issue: { id: issue.id, identifier: issue.identifier, title: issue.title },
  };
  payload.agentActivity = { ...(payload.agentActivity as Record<string, unknown>), id: ws.newId(), agentSessionId };
  return payload;
}

/** An Issue update delegating `issue` to the app. */
export function delegated(issue: FakeIssue): Record<string, unknown> {
  const payload = linearFixture('issue-update-delegated');
  payload.data = {
    ...(payload.data as Record<string, unknown>),
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    teamId: issue.teamId,
    team: { id: issue.teamId },
    projectId: issue.projectId,
  };
  return payload;
}

/** POSTs a payload signed like Linear to `url`; resolves with the HTTP status. */
export async function postWebhook(url: string, payload: Record<string, unknown>, deliveryId?: string): Promise<number> {
  const signed = signLinearWebhook(payload, deliveryId ? { deliveryId } : {});
  const response = await fetch(`${url}/linear/webhook`, { method: 'POST', headers: signed.headers, body: signed.body });
  await response.text();
  return response.status;
}

export interface LinearE2E {
  dir: string;
  repo: string;
  fake: FakeLinear;
  ws: FakeWorkspace;
  config: Config;
  clock: ManualClock;
  db: DatabaseSync;
  manager: SessionManager;
  outbox: RecordingOutbox;
  inference: ScriptedInference;
  linear: LinearIntegration;
  /** The ApprovalDesk of the sessions (built when asked for: `linearE2E(overrides, { approvals: true })`). */
  approvals: ApprovalDesk | undefined;
  app: FastifyInstance;
  url: string;
  /** Team ids by key (OK: audits pass; RW: fail then pass; NO: always fail). */
  teams: Record<'OK' | 'RW' | 'NO', string>;
  /** Signs and POSTs a payload to the real route; resolves with the HTTP status. */
  post(payload: Record<string, unknown>, deliveryId?: string): Promise<number>;
  /** Activities of an agent session in the fake workspace. */
  activities(agentSessionId: string): Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * Builds and starts the rig; `overrides` are dotted config overrides. With `approvals`, the sessions' permission
 * requests go to an ApprovalDesk over the same database, handed to the Linear integration as the daemon does.
 */
export async function linearE2E(
  overrides: Record<string, unknown> = {},
  options: {
    approvals?: boolean;
    /** GitHub's pull-request service over the rig's database: passed dispatches end in a PR (onPass). */
    pullRequests?: (db: Kysely<Database>) => DispatchPullRequests;
  } = {},
): Promise<LinearE2E> {
  const dir = tempDir('sb-linear-e2e-');
  const repo = replayRepo(join(dir.path, 'repo'));
  const fakeLinear = await startFakeLinear();
  const ws = fakeLinear.workspace;
  const teams = { OK: addTeam(ws, 'OK'), RW: addTeam(ws, 'RW'), NO: addTeam(ws, 'NO') };
  const { config } = loadConfig({
    home: dir.path,
    env: {},
    overrides: {
      ...linearDaemonConfig({
        dir: dir.path,
        repo,
        linearUrl: fakeLinear.graphqlUrl,
        agentLog: join(dir.path, 'agents.jsonl'),
      }),
      ...overrides,
    },
  });
  const clock = new ManualClock(Date.now());
  let approvals: ApprovalDesk | undefined;
  const { db, logs, manager } = sessionManagerIn(
    dir.path,
    config,
    clock,
    undefined,
    options.approvals
      ? (database) =>
          (approvals = new ApprovalDesk({
            db: sqliteKysely(database),
            clock,
            logger: silentLogger(),
            config: config.approvals,
            rootOf: (workdir) => workspaceRoot(workdir, config.workspaces),
          }))
      : undefined,
  );
  await manager.restore();
  const outbox = new RecordingOutbox();
  const inference = new ScriptedInference();
  const linear = createLinearIntegration({
    config,
    env: {},
    db: sqliteKysely(db),
    clock,
    logger: silentLogger(),
    sessions: manager,
    logs,
    inference,
    outbox,
    ...(approvals ? { approvals } : {}),
    ...(options.pullRequests ? { pullRequests: options.pullRequests(sqliteKysely(db)) } : {}),
  });
  await linear.start();
  const app = Fastify();
  await registerLinearRoutes(app, { ...linear.routes, logger: silentLogger() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    dir: dir.path,
    repo,
    fake: fakeLinear,
    ws,
    config,
    clock,
    db,
    manager,
    outbox,
    inference,
    linear,
    approvals,
    app,
    url,
    teams,
    post: (payload, deliveryId) => postWebhook(url, payload, deliveryId),
    activities: (id) => ws.agentSessions.get(id)?.activities.map((a) => a.content) ?? [],
    async close() {
      await app.close();
      await linear.stop();
      await manager.stop();
      approvals?.stop();
      db.close();
      await fakeLinear.close();
      dir.remove();
    },
  };
}

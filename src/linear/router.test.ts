import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { EngineFixture } from '../../test/support/engine-fixture.ts';
import { engineFixture } from '../../test/support/engine-fixture.ts';
import { FAKE_IDS } from '../../test/support/fake-linear.ts';
import type { LinearGlueFixture } from '../../test/support/linear-glue-fixture.ts';
import { linearGlueFixture } from '../../test/support/linear-glue-fixture.ts';
import type { LinearFixtureName } from '../../test/support/linear-webhook-fixtures.ts';
import { LINEAR_FIXTURES, linearFixture } from '../../test/support/linear-webhook-fixtures.ts';
import { RecordingPipeline } from '../../test/support/recording-pipeline.ts';
import { Gate, ScriptedInference } from '../../test/support/scripted-inference.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { LinearClaimStore } from '../store/linear-claims.ts';
import { LinearEffectStore } from '../store/linear-effects.ts';
import { LinearJobStore } from '../store/linear-jobs.ts';
import { LinearApiError } from './api/types.ts';
import { LinearEffects } from './effects.ts';
import { MentionResponder } from './mentions.ts';
import { Planner } from './planner/planner.ts';
import { LinearRouter } from './router.ts';
import { Triage } from './triage.ts';
import type { LinearEvent } from './webhooks/events.ts';
import { parseLinearEvent } from './webhooks/parse.ts';

const COMMENT_QA = '6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c';
const COMMENT_MENTION = '9c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
const COMMENT_SESSION = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
const ISSUE3 = '3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b';

interface Setup {
  fx: LinearGlueFixture;
  ef: EngineFixture | null;
  engineInference: ScriptedInference;
  clock: ManualClock;
  pipeline: RecordingPipeline;
  planner: Planner;
  router: LinearRouter;
  claims: LinearClaimStore;
  /** Parses a fixture (optionally changed) as the webhook worker would and hands it to the router. */
  send(
    name: LinearFixtureName,
    options?: { deliveryId?: string; change?: (payload: Record<string, unknown>) => void },
  ): Promise<LinearEvent>;
  /** Lets the router's job queue run (after moving the clock by `ms`). */
  idle(ms?: number): Promise<void>;
  close(): Promise<void>;
}

let deliveries = 0;

async function setup(options: { engine?: boolean; linear?: Record<string, unknown> } = {}): Promise<Setup> {
  const clock = new ManualClock(Date.parse('2026-03-01T12:00:00.000Z'));
  const fx = await linearGlueFixture(
    {
      profiles: {
        qa: { instructions: 'You are the QA lead. Review test plans.' },
        reviewer: { mentionAliases: ['review', 'reviewer'] },
      },
      'router.retryInitialSec': 1,
      ...options.linear,
    },
    clock,
    {},
    (path) => openTestStore(path),
  );
  // The fixtures' Issue.create issue exists in the workspace, as it would in Linear.
  fx.fake.workspace.addIssue({
    id: ISSUE3,
    teamId: FAKE_IDS.team,
    title: 'Checkout button does nothing on Android',
    description: 'Tapping Pay on Android Chrome does nothing.',
  });
  const engineInference = new ScriptedInference();
  const ef =
    options.engine === false
      ? null
      : await engineFixture({ inference: engineInference, open: (path) => openTestStore(path) });
  const logger = silentLogger();
  const pipeline = new RecordingPipeline(fx.api);
  const planner = new Planner({
    api: fx.api,
    db: fx.db,
    inference: fx.inference,
    config: fx.config.planner,
    clock,
    logger,
  });
  const triage = new Triage({ api: fx.api, inference: fx.inference, config: fx.config.triage, logger });
  const mentions = new MentionResponder({ api: fx.api, config: fx.full, ...(ef ? { engine: ef.engine } : {}), logger });
  const store = fx.db;
  const claims = new LinearClaimStore(store);
  const router = new LinearRouter({
    config: fx.full,
    api: fx.api,
    pipeline,
    planner,
    triage,
    mentions,
    claims,
    jobStore: new LinearJobStore(store),
    effects: new LinearEffects(new LinearEffectStore(store), clock, logger),
    clock,
    logger,
  });
  await router.start();
  const idle = async (ms = 0): Promise<void> => {
    if (ms > 0) clock.advance(ms);
    await router.jobs.idle();
  };
  return {
    fx,
    ef,
    engineInference,
    clock,
    pipeline,
    planner,
    router,
    claims,
    async send(name, opts = {}) {
      const payload = linearFixture(name);
      opts.change?.(payload);
      const deliveryId = opts.deliveryId ?? `delivery-${++deliveries}`;
      const parsed = await parseLinearEvent(payload, { deliveryId, appUserId: async () => FAKE_IDS.appUser });
      assert.equal(parsed.kind, 'event', `${name} parses to an event`);
      if (parsed.kind !== 'event') throw new Error('unreachable');
      await router.handle(parsed.event);
      return parsed.event;
    },
    idle,
    async close() {
      await router.stop();
      await ef?.close();
      await fx.close();
    },
  };
}

function thoughts(fx: LinearGlueFixture, agentSessionId: string): string[] {
  return fx
    .activities(agentSessionId)
    .filter((a) => a.type === 'thought')
    .map((a) => String(a.body));
}

function mutationCount(fx: LinearGlueFixture, name: string): number {
  return fx.fake.mutations.filter((m) => m.name === name).length;
}

describe('LinearRouter', () => {
  let s: Setup | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('takes every fixture event without failing', async () => {
    s = await setup();
    s.engineInference.onRequest(() => ({ text: 'An answer.' }));
    s.fx.inference.onRequest(() => ({ text: '{"estimate": 2, "labelIds": [], "priority": 3, "assessment": "Fine."}' }));
    for (const name of LINEAR_FIXTURES) await s.send(name);
    await s.idle(60_000);
    assert.ok(s.pipeline.dispatches.length >= 2);
  });

  it('dispatches a new agent session with its prompt, promptContext and guidance rules (an array), once across redeliveries', async () => {
    s = await setup();
    await s.send('agent-session-created', { deliveryId: 'd-created' });
    await s.send('agent-session-created', { deliveryId: 'd-created' });
    const first = s.pipeline.dispatches[0];
    assert.ok(first);
    assert.equal(first.issueRef, FAKE_IDS.issue1);
    assert.equal(first.ctx.agentSessionId, FAKE_IDS.agentSession);
    assert.equal(first.ctx.prompt, '@switchboard can you take this one? Repro steps are in the description.');
    assert.match(first.ctx.promptContext ?? '', /^<issue identifier="ENG-1">/);
    assert.deepEqual(first.ctx.guidance, ['Always open a draft PR and link it in the issue.']);
    assert.deepEqual(thoughts(s.fx, FAKE_IDS.agentSession), ['Picked up ENG-1'], 'one first thought');
    assert.equal(await s.claims.owner(`comment:${COMMENT_SESSION}`), `agent-session:${FAKE_IDS.agentSession}`);
  });

  it('passes prompts to the pipeline once (a redelivered prompt is not repeated) and stops on the stop signal', async () => {
    s = await setup();
    await s.send('agent-session-created');
    await s.send('agent-session-prompted', { deliveryId: 'd-prompt' });
    await s.send('agent-session-prompted', { deliveryId: 'd-prompt' });
    assert.deepEqual(s.pipeline.prompts, [
      { agentSessionId: FAKE_IDS.agentSession, text: 'Use the existing session cookie helper instead of a new one.' },
    ]);
    await s.send('agent-session-stop');
    assert.deepEqual(s.pipeline.stops, [FAKE_IDS.agentSession]);
  });

  it('answers a stop for a session with nothing running', async () => {
    s = await setup();
    await s.send('agent-session-stop');
    const last = s.fx.activities(FAKE_IDS.agentSession).at(-1);
    assert.deepEqual(last, { type: 'response', body: 'Nothing was running for this session.' });
  });

  it('starts a dispatch from a prompt in a session without one (e.g. one refused before)', async () => {
    s = await setup();
    await s.send('agent-session-prompted');
    assert.equal(s.pipeline.dispatches.length, 1);
    assert.equal(s.pipeline.dispatches[0]?.ctx.prompt, 'Use the existing session cookie helper instead of a new one.');
  });

  it('has a profile answer its @mention in the comment thread, once even when the mention notification reports it too', async () => {
    s = await setup();
    s.engineInference.script({ text: 'The test plan misses the Safari case.' });
    await s.send('comment-create-mention');
    // The same comment reported by an AppUserNotification (its delay has not passed yet).
    await s.send('app-user-notification-mention', {
      change: (p) => {
        const n = p.notification as Record<string, unknown>;
        n.comment = { id: COMMENT_QA, body: '@qa please review the test plan before we merge', userId: FAKE_IDS.human };
      },
    });
    await s.idle();
    let replies = s.fx.appComments(FAKE_IDS.issue1);
    assert.equal(replies.length, 1);
    assert.equal(replies[0]?.body, '**qa**: The test plan misses the Safari case.');
    assert.equal(replies[0]?.parentId, COMMENT_QA, 'a reply in the comment thread');
    const prompt = s.engineInference.requests[0]?.messages.find((m) => m.role === 'user');
    assert.ok(prompt && prompt.role === 'user');
    assert.match(
      prompt.content,
      /You are the QA lead\. Review test plans\.[\s\S]*ENG-1 "Fix login redirect loop"[\s\S]*Seen on Safari only\.[\s\S]*by Ada Lovelace\)\n@qa please review the test plan/,
    );
    await s.idle(10_000);
    replies = s.fx.appComments(FAKE_IDS.issue1);
    assert.equal(replies.length, 1, 'the notification path stood down');
    assert.equal(s.engineInference.requests.length, 1);
  });

  it('answers a mention reported only by an AppUserNotification after its delay, with the default answerer', async () => {
    s = await setup();
    s.engineInference.script({ text: 'Nothing blocks it; it waits for review.' });
    await s.send('app-user-notification-mention');
    await s.idle();
    assert.equal(s.fx.appComments(FAKE_IDS.issue1).length, 0, 'not before the delay');
    await s.idle(10_000);
    const replies = s.fx.appComments(FAKE_IDS.issue1);
    assert.deepEqual(
      replies.map((r) => [r.body, r.parentId]),
      [['**switchboard**: Nothing blocks it; it waits for review.', COMMENT_MENTION]],
    );
  });

  it('does not answer a mention notification of a comment that opened an agent session', async () => {
    s = await setup();
    await s.send('agent-session-created');
    await s.send('app-user-notification-mention', {
      change: (p) => {
        const n = p.notification as Record<string, unknown>;
        n.comment = { id: COMMENT_SESSION, body: '@switchboard can you take this one?', userId: FAKE_IDS.human };
      },
    });
    await s.idle(10_000);
    assert.equal(s.fx.appComments(FAKE_IDS.issue1).length, 0);
    assert.equal(s.engineInference.requests.length, 0);
  });

  it('dispatches an assignment once when both the Issue webhook and the AppUserNotification report it (either order), and once across redeliveries', async () => {
    for (const order of [
      ['issue-update-delegated', 'app-user-notification-assigned'],
      ['app-user-notification-assigned', 'issue-update-delegated'],
    ] as const) {
      s = await setup();
      await s.send(order[0], { deliveryId: 'first' });
      await s.send(order[0], { deliveryId: 'first' });
      await s.send(order[1], { deliveryId: 'second' });
      assert.equal(mutationCount(s.fx, 'agentSessionCreateOnIssue'), 1, `one agent session (${order[0]} first)`);
      const created = [...s.fx.fake.workspace.agentSessions.values()].filter((a) => a.issueId === FAKE_IDS.issue2);
      assert.equal(created.length, 1);
      const sessionId = created[0]?.id as string;
      assert.deepEqual(thoughts(s.fx, sessionId), ['Picked up ENG-2'], 'only one path posted the first thought');
      assert.ok(
        s.pipeline.dispatches.every((d) => d.issueRef === FAKE_IDS.issue2 && d.ctx.agentSessionId === sessionId),
      );
      await s.close();
      s = undefined;
    }
  });

  it('triages a new issue: one issueUpdate and the assessment as a comment; skipped when off', async () => {
    s = await setup();
    const feature = [...s.fx.fake.workspace.labels.values()].find((l) => l.name === 'Bug')?.id;
    s.fx.inference.script({
      text: `{"estimate": 2, "labelIds": ["${feature}"], "priority": 2, "assessment": "A click handler problem on Android."}`,
    });
    await s.send('issue-create', { deliveryId: 'triage-1' });
    await s.send('issue-create', { deliveryId: 'triage-1' });
    await s.idle();
    assert.equal(mutationCount(s.fx, 'issueUpdate'), 1);
    assert.deepEqual(
      s.fx.appComments(ISSUE3).map((c) => c.body),
      ['**Triage**: A click handler problem on Android.\n\n_Set: estimate 2 · priority high · labels Bug_'],
    );
    await s.close();
    s = await setup({ linear: { 'triage.enabled': false } });
    await s.send('issue-create');
    await s.idle();
    assert.equal(s.fx.inference.requests.length, 0);
    assert.equal(s.fx.appComments(ISSUE3).length, 0);
  });

  it('a triage job run again after a crash (left running, its effects done) neither updates the issue nor comments twice', async () => {
    s = await setup();
    const answer =
      '{"estimate": 2, "labelIds": [], "priority": 2, "assessment": "A click handler problem on Android."}';
    s.fx.inference.script({ text: answer });
    await s.send('issue-create');
    await s.idle();
    assert.equal(mutationCount(s.fx, 'issueUpdate'), 1);
    assert.equal(s.fx.appComments(ISSUE3).length, 1);
    // The process died after the job's effects and before the job was marked done: the restart runs it again.
    await s.router.stop();
    await s.fx.db.updateTable('linear_jobs').set({ status: 'running' }).where('key', '=', `triage:${ISSUE3}`).execute();
    s.fx.inference.script({ text: answer });
    await s.router.start();
    await s.idle();
    assert.equal(s.fx.inference.requests.length, 2, 'the job did run again');
    assert.equal(mutationCount(s.fx, 'issueUpdate'), 1, 'one triage update');
    assert.equal(s.fx.appComments(ISSUE3).length, 1, 'one triage comment');
  });

  it('plans a project from comments: "plan this project" starts it, each comment is one turn, a notification of the same comment is not a second', async () => {
    s = await setup();
    const comment = (id: string, body: string) => (p: Record<string, unknown>) => {
      const data = p.data as Record<string, unknown>;
      data.id = id;
      data.body = body;
    };
    // The first answer comes right after "plan this project", before its start has run: it is the first turn.
    s.fx.inference.script({ text: 'Noted: auth and payments. Which comes first?' });
    await s.send('comment-create-mention', { change: comment('c-plan', '@switchboard plan this project') });
    await s.send('comment-create-mention', { change: comment('c-turn', 'Auth and payments.') });
    await s.idle();
    const planning = await s.planner.activeForIssue(FAKE_IDS.issue1);
    assert.ok(planning, 'planning mode is on');
    assert.match(
      s.fx.appComments(FAKE_IDS.issue1).at(-2)?.body ?? '',
      /Planning mode is on for the project \*\*Launch\*\*/,
    );
    await s.send('app-user-notification-mention', {
      change: (p) => {
        p.action = 'issueNewComment';
        const n = p.notification as Record<string, unknown>;
        n.type = 'issueNewComment';
        n.comment = { id: 'c-turn', body: 'Auth and payments.', userId: FAKE_IDS.human };
      },
    });
    await s.idle(10_000);
    assert.equal(s.fx.inference.requests.length, 1, 'one interview turn');
    assert.equal(s.fx.appComments(FAKE_IDS.issue1).at(-1)?.body, 'Noted: auth and payments. Which comes first?');
    assert.equal((await s.planner.store.get(planning.id))?.turnCount, 1);
  });

  it('routes prompts of a planning session to the planner and a stop cancels the running turn', async () => {
    s = await setup();
    const started = await s.planner.start(FAKE_IDS.issue1, {
      reply: { kind: 'comment', issueId: FAKE_IDS.issue1 },
      agentSessionId: FAKE_IDS.agentSession,
    });
    assert.equal(started.outcome, 'started');
    const gate = new Gate();
    s.fx.inference.script(gate);
    await s.send('agent-session-prompted');
    await gate.reached();
    assert.equal(s.pipeline.prompts.length, 0, 'not a pipeline prompt');
    assert.match(thoughts(s.fx, FAKE_IDS.agentSession).at(-1) ?? '', /Working on the plan/);
    await s.send('agent-session-stop');
    gate.release({ text: 'too late' });
    await s.idle();
    const last = s.fx.activities(FAKE_IDS.agentSession).at(-1);
    assert.deepEqual(last, {
      type: 'response',
      body: 'Stopped the planning turn. Planning mode stays on until you say "abandon planning".',
    });
    assert.equal((await s.planner.store.get(started.session?.id ?? ''))?.turnCount, 0);
  });

  it('a planning prompt handled again (a re-run after a crash) acknowledges it once and queues one turn', async () => {
    s = await setup();
    const started = await s.planner.start(FAKE_IDS.issue1, {
      reply: { kind: 'comment', issueId: FAKE_IDS.issue1 },
      agentSessionId: FAKE_IDS.agentSession,
    });
    assert.equal(started.outcome, 'started');
    const before = thoughts(s.fx, FAKE_IDS.agentSession).length;
    s.fx.inference.script({ text: 'Noted.' });
    await s.send('agent-session-prompted', { deliveryId: 'prompt-1' });
    await s.send('agent-session-prompted', { deliveryId: 'prompt-1' });
    await s.idle();
    assert.deepEqual(thoughts(s.fx, FAKE_IDS.agentSession).slice(before), ['Working on the plan…']);
    assert.equal(s.fx.inference.requests.length, 1, 'one planning turn');
  });

  it('says so in the thread when nobody can answer a mention (no engine), and does not retry what cannot pass', async () => {
    s = await setup({ engine: false });
    await s.send('comment-create-mention');
    await s.idle();
    const replies = s.fx.appComments(FAKE_IDS.issue1);
    assert.equal(replies.length, 1);
    assert.match(replies[0]?.body ?? '', /^\*\*qa\*\* could not answer: the agent engine is not running/);
    assert.equal(replies[0]?.parentId, COMMENT_QA);
  });

  it('a job that gave up, run again after a crash before its failure was recorded, says its last word once', async () => {
    s = await setup({ engine: false });
    await s.send('comment-create-mention');
    await s.idle();
    assert.equal(s.fx.appComments(FAKE_IDS.issue1).length, 1);
    await s.router.stop();
    await s.fx.db
      .updateTable('linear_jobs')
      .set({ status: 'running' })
      .where('key', '=', `mention:${COMMENT_QA}`)
      .execute();
    await s.router.start();
    await s.idle();
    assert.equal(s.fx.appComments(FAKE_IDS.issue1).length, 1, 'one "could not answer"');
  });

  it('lets the webhook worker retry what may pass, and resolves what the pipeline already reported', async () => {
    s = await setup();
    s.pipeline.failNext = new LinearApiError('network', 'socket hang up');
    await assert.rejects(s.send('agent-session-created'), /socket hang up/);
    s.pipeline.failNext = new LinearApiError('user', 'Entity not found: Issue');
    await s.send('agent-session-created');
  });
});

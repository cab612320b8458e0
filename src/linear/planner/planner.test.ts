import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FAKE_IDS } from '../../../test/support/fake-linear.ts';
import type { LinearGlueFixture } from '../../../test/support/linear-glue-fixture.ts';
import { linearGlueFixture } from '../../../test/support/linear-glue-fixture.ts';
import { Gate } from '../../../test/support/scripted-inference.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { linearPlannerSchema } from '../../core/config-linear-agents.ts';
import { silentLogger } from '../../core/logger.ts';
import type { ReplyTarget } from '../reply.ts';
import { Planner, PLANNING_BLOCK_MESSAGE } from './planner.ts';
import { transitionPlanning } from './planning-transitions.ts';
import { plannerCommand } from './prompts.ts';

const LONG = 'Build it end to end: code, tests and docs, reviewed and merged into main.';

function call(name: string, input: Record<string, unknown>, id = name) {
  return { id, name, input };
}

describe('Planner', () => {
  let fx: LinearGlueFixture;
  let planner: Planner;
  const reply: ReplyTarget = { kind: 'comment', issueId: FAKE_IDS.issue1 };

  beforeEach(async () => {
    fx = await linearGlueFixture({}, undefined, {}, (path) => openTestStore(path));
    planner = new Planner({
      api: fx.api,
      db: fx.db,
      inference: fx.inference,
      config: linearPlannerSchema.parse({}),
      clock: fx.clock,
      logger: silentLogger(),
    });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('reads commands from messages, with or without an @mention', () => {
    assert.equal(plannerCommand('@switchboard plan this project'), 'start');
    assert.equal(plannerCommand('Finalize plan please'), 'finalize');
    assert.equal(plannerCommand('@switchboard abandon'), 'abandon');
    assert.equal(plannerCommand('cancel planning'), 'abandon');
    assert.equal(plannerCommand('we should abandon the old API for the new one'), 'message');
    assert.equal(plannerCommand('Auth, payments and notifications'), 'message');
  });

  it('refuses an issue outside any project', async () => {
    const loose = fx.fake.workspace.addIssue({ teamId: FAKE_IDS.team, title: 'No project' });
    const result = await planner.start(loose.id, { reply: { kind: 'comment', issueId: loose.id } });
    assert.equal(result.outcome, 'no_project');
    assert.match(fx.appComments(loose.id)[0]?.body ?? '', /is not in a project/);
  });

  it('runs the state machine: start, an interview turn with the tools, a failed audit, a fix, approval', async () => {
    const started = await planner.start(FAKE_IDS.issue1, { reply, author: 'Ada' });
    assert.equal(started.outcome, 'started');
    const session = started.session;
    assert.ok(session);
    assert.equal(session.status, 'interviewing');
    assert.match(
      fx.appComments(FAKE_IDS.issue1).at(-1)?.body ?? '',
      /Planning mode is on for the project \*\*Launch\*\*[\s\S]*ENG-1 Fix login redirect loop/,
    );
    // The project is blocked for dispatch while planning; other projects are not.
    assert.equal(
      await planner.isBlocked({ project: { id: FAKE_IDS.project, name: 'Launch' } }),
      PLANNING_BLOCK_MESSAGE,
    );
    assert.equal(await planner.isBlocked({ project: { id: 'other', name: 'Other' } }), null);
    assert.equal(await planner.isBlocked({ project: null }), null);
    // A second start finds the session in progress.
    assert.equal(
      (await planner.start(FAKE_IDS.issue2, { reply: { kind: 'comment', issueId: FAKE_IDS.issue2 } })).outcome,
      'already',
    );

    // One interview turn: an epic, a sub-issue under it, a blocking link, a look at the project, then the answer.
    fx.inference.script(
      { toolCalls: [call('plan_create_issue', { title: 'Payments', description: LONG, isEpic: true })] },
      {
        toolCalls: [
          call('plan_create_issue', {
            title: 'Card checkout',
            description: LONG,
            parent: 'ENG-3',
            estimate: 3,
            priority: 2,
          }),
        ],
      },
      {
        toolCalls: [
          call('plan_link_issues', { from: 'ENG-4', to: 'ENG-2', type: 'blocked_by' }),
          call('plan_get_project', {}, 'snap'),
        ],
      },
      { text: 'Created ENG-3 (epic) and ENG-4. What about refunds?' },
    );
    const turn = await planner.turn(session.id, 'Payments with card checkout, after the audit log.', 'message', {
      reply,
    });
    assert.equal(turn.outcome, 'turn');
    assert.equal(turn.session.turnCount, 1);
    assert.equal(turn.session.issuesCreated, 2);
    assert.deepEqual(
      turn.session.history.map((m) => m.role),
      ['user', 'assistant'],
    );
    const ws = fx.fake.workspace;
    const epic = ws.findIssue('ENG-3');
    const child = ws.findIssue('ENG-4');
    assert.ok(epic && child);
    assert.equal(child.parentId, epic.id);
    assert.equal(child.projectId, FAKE_IDS.project);
    assert.ok(
      epic.labelIds.some((id) => ws.labels.get(id)?.name === 'Epic'),
      'the epic is labelled Epic',
    );
    // Sub-issues go out with the sub_issues feature header.
    const creates = fx.fake.requestsFor('issueCreate');
    assert.deepEqual(
      creates.map((r) => r.features),
      [undefined, 'sub_issues'],
    );
    assert.ok(
      [...ws.relations.values()].some(
        (r) => r.issueId === FAKE_IDS.issue2 && r.relatedIssueId === child.id && r.type === 'blocks',
      ),
    );
    // The tool results went back to the model: the snapshot shows the tree and the relation.
    const last = fx.inference.requests.at(-1);
    const snapshot = last?.messages.find((m) => m.role === 'tool' && m.toolCallId === 'snap');
    assert.ok(snapshot && snapshot.role === 'tool');
    assert.match(
      snapshot.content,
      /- ENG-3 Payments \(epic[\s\S]*\n {2}- ENG-4 Card checkout \(estimate 3, priority 2[^\n]*— blocked by ENG-2/,
    );
    assert.equal(fx.appComments(FAKE_IDS.issue1).at(-1)?.body, 'Created ENG-3 (epic) and ENG-4. What about refunds?');

    // Finalize: ENG-1's description is short, ENG-2 has none and no estimate → back to interviewing with findings.
    const failed = await planner.turn(session.id, 'finalize plan', 'finalize', { reply });
    assert.equal(failed.outcome, 'audit_failed');
    assert.equal(failed.session.status, 'interviewing');
    assert.ok(failed.session.lastAudit?.some((f) => /ENG-1, ENG-2/.test(f)));
    assert.match(
      fx.appComments(FAKE_IDS.issue1).at(-1)?.body ?? '',
      /not complete yet[\s\S]*\*\*description\*\*: Descriptions shorter than 50 characters: ENG-1, ENG-2/,
    );
    // The next turn's system prompt carries the findings.
    fx.inference.script(
      {
        toolCalls: [
          call('plan_update_issue', { issue: 'ENG-1', description: LONG }, 'u1'),
          call('plan_update_issue', { issue: 'ENG-2', description: LONG, estimate: 2 }, 'u2'),
          call('plan_update_issue', { issue: 'ENG-1', labels: ['Nope'] }, 'u3'),
          call('plan_audit', {}, 'audit'),
        ],
      },
      { text: 'Fixed the descriptions and the estimate.' },
    );
    await planner.turn(session.id, 'Fix what the audit found.', 'message', { reply });
    const fixRequest = fx.inference.requests.at(-2);
    assert.match(fixRequest?.system ?? '', /Open findings of the last audit\n- Descriptions shorter than 50/);
    const results = fx.inference.requests.at(-1)?.messages.filter((m) => m.role === 'tool') ?? [];
    const bad = results.find((m) => m.role === 'tool' && m.toolCallId === 'u3');
    assert.ok(bad && bad.role === 'tool' && bad.isError, 'an unknown label is an error result, not a crash');
    assert.match(bad.content, /unknown label Nope; the team has: Bug, Feature, Security/);
    const audit = results.find((m) => m.role === 'tool' && m.toolCallId === 'audit');
    assert.ok(audit && audit.role === 'tool');
    assert.match(audit.content, /passes the audit \(4 issues, 1 epics\)/);

    const approved = await planner.turn(session.id, '@switchboard finalize plan', 'finalize', { reply });
    assert.equal(approved.outcome, 'approved');
    assert.equal(approved.session.status, 'approved');
    assert.match(
      fx.appComments(FAKE_IDS.issue1).at(-1)?.body ?? '',
      /^Plan approved: it passes the audit \(4 issues\)/,
    );
    assert.equal(
      await planner.isBlocked({ project: { id: FAKE_IDS.project, name: 'Launch' } }),
      null,
      'approval ends planning mode',
    );
    // A finished session takes no more turns.
    assert.equal((await planner.turn(session.id, 'more', 'message', { reply })).outcome, 'not_interviewing');
  });

  it('abandons on request and ends planning mode', async () => {
    const started = await planner.start(FAKE_IDS.issue1, { reply });
    assert.ok(started.session);
    const result = await planner.turn(started.session.id, 'cancel planning', 'abandon', { reply });
    assert.equal(result.outcome, 'abandoned');
    assert.equal((await planner.store.get(started.session.id))?.status, 'abandoned');
    assert.equal(await planner.isBlocked({ project: { id: FAKE_IDS.project, name: 'Launch' } }), null);
    assert.match(fx.appComments(FAKE_IDS.issue1).at(-1)?.body ?? '', /abandoned/);
    // A new planning session can start afterwards.
    assert.equal((await planner.start(FAKE_IDS.issue1, { reply })).outcome, 'started');
  });

  it('refuses transitions the state machine does not have', async () => {
    const started = await planner.start(FAKE_IDS.issue1, { reply });
    assert.ok(started.session);
    await assert.rejects(
      transitionPlanning(planner.store, started.session?.id ?? '', 'interviewing', 'approved', 1),
      /no transition from interviewing to approved/,
    );
    assert.equal(
      await transitionPlanning(planner.store, started.session.id, 'plan_review', 'approved', 1),
      null,
      'compare-and-swap: not in plan_review',
    );
  });

  it('finishes a review a crash left in plan_review', async () => {
    const started = await planner.start(FAKE_IDS.issue1, { reply });
    assert.ok(started.session);
    await transitionPlanning(planner.store, started.session.id, 'interviewing', 'plan_review', 2);
    const again = new Planner({
      api: fx.api,
      db: fx.db,
      inference: fx.inference,
      config: linearPlannerSchema.parse({}),
      clock: fx.clock,
      logger: silentLogger(),
    });
    await again.recover();
    assert.equal(
      (await again.store.get(started.session.id))?.status,
      'interviewing',
      'the seeded project fails the audit',
    );
    assert.match(fx.appComments(FAKE_IDS.issue1).at(-1)?.body ?? '', /not complete yet/);
  });

  it('answers without a model when no provider is configured, and stops a running turn on abort', async () => {
    const started = await planner.start(FAKE_IDS.issue1, { reply });
    assert.ok(started.session);
    fx.inference.available = false;
    assert.equal((await planner.turn(started.session.id, 'hello', 'message', { reply })).outcome, 'no_inference');
    assert.match(fx.appComments(FAKE_IDS.issue1).at(-1)?.body ?? '', /no inference provider/);
    fx.inference.available = true;
    const gate = new Gate();
    fx.inference.script(gate);
    const controller = new AbortController();
    const running = planner.turn(started.session.id, 'Auth and payments', 'message', { reply }, controller.signal);
    await gate.reached();
    const before = fx.appComments(FAKE_IDS.issue1).length;
    controller.abort();
    gate.release({ text: 'too late' });
    assert.equal((await running).outcome, 'stopped');
    assert.equal(fx.appComments(FAKE_IDS.issue1).length, before, 'a stopped turn posts nothing');
  });
});

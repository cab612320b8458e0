import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import type { PermissionDecision } from '../coding/harness.ts';
import type { PermissionAsk } from '../coding/permission-gate.ts';
import { ManualClock } from '../core/clock.ts';
import type { ApprovalsConfig } from '../core/config-approvals.ts';
import { approvalsSchema } from '../core/config-approvals.ts';
import type { AppError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import type { Approval, ApprovalEvent } from './approval.ts';
import { ApprovalDesk } from './desk.ts';

const ROOT = '/srv/repo';

function ask(command: string, extra: Partial<PermissionAsk> = {}): PermissionAsk {
  return {
    sessionId: 's1',
    sessionName: 'fix-parser',
    workdir: `${ROOT}/pkg`,
    requestId: `r-${command}`,
    tool: 'Bash',
    input: { command },
    ...extra,
  };
}

/** Records every answer the agent got. */
function answers(): { got: PermissionDecision[]; answer: (d: PermissionDecision, a: Approval) => void } {
  const got: PermissionDecision[] = [];
  return { got, answer: (decision) => got.push(decision) };
}

describeEachDatabase('ApprovalDesk', (fresh) => {
  async function desk(config: Partial<ApprovalsConfig> = {}, clock = new ManualClock(1_000)) {
    const { db } = await fresh();
    const events: ApprovalEvent[] = [];
    const d = new ApprovalDesk({
      db,
      clock,
      logger: silentLogger(),
      config: approvalsSchema.parse(config),
      rootOf: () => ROOT,
    });
    d.on((e) => events.push(e));
    return { desk: d, events, clock, db };
  }

  it('stores a request before telling anyone, decides it once, and answers the agent once', async () => {
    const { desk: d, events } = await desk();
    const a = answers();
    const approval = await d.ask(ask('npm test'), a.answer);
    assert.equal(approval.status, 'pending');
    assert.equal(approval.summary, 'Bash: npm test');
    assert.match(approval.id, /^[0-9a-z]{5}$/);
    assert.deepEqual(
      events.map((e) => e.type),
      ['requested'],
    );
    assert.deepEqual(
      (await d.list({ status: 'pending' })).map((x) => x.id),
      [approval.id],
    );

    const first = await d.decide({ id: approval.id, decision: 'allow', by: 'telegram|42' });
    assert.equal(first.outcome, 'decided');
    assert.equal(first.approval.status, 'allowed');
    assert.equal(first.approval.scope, 'once');
    assert.equal(first.approval.decidedBy, 'telegram|42');
    const second = await d.decide({ id: approval.id, decision: 'deny', by: 'web' });
    assert.equal(second.outcome, 'already');
    assert.equal(second.approval.decidedBy, 'telegram|42');
    assert.deepEqual(a.got, [{ allow: true }]);
    assert.deepEqual(
      events.map((e) => e.type),
      ['requested', 'decided'],
    );
  });

  it('concurrent decisions from two surfaces: exactly one wins', async () => {
    const { desk: d } = await desk();
    const a = answers();
    const approval = await d.ask(ask('make'), a.answer);
    const results = await Promise.all([
      d.decide({ id: approval.id, decision: 'allow', by: 'telegram|42' }),
      d.decide({ id: approval.id, decision: 'deny', message: 'no', by: 'web' }),
      d.decide({ id: approval.id, decision: 'allow-session', by: 'cli' }),
    ]);
    assert.equal(results.filter((r) => r.outcome === 'decided').length, 1);
    assert.equal(a.got.length, 1);
    const winner = results.find((r) => r.outcome === 'decided');
    for (const r of results) assert.equal(r.approval.status, winner?.approval.status);
  });

  it('allow for session stores a prefix rule for that session only; the next call of the kind is allowed by it', async () => {
    const { desk: d, events } = await desk();
    const first = await d.ask(ask('npm test'), answers().answer);
    await d.decide({ id: first.id, decision: 'allow-session', by: 'telegram|42' });
    const a = answers();
    const next = await d.ask(ask('npm test -- --watch', { requestId: 'r2' }), a.answer);
    assert.equal(next.status, 'allowed');
    assert.match(next.decidedBy ?? '', /^rule:/);
    assert.deepEqual(a.got, [{ allow: true }]);
    const last = events.at(-1);
    assert.equal(last?.type === 'decided' && last.asked, false, 'a rule decision was never shown to anyone');
    // Another command, and the same command in another session, still ask.
    assert.equal((await d.ask(ask('rm -rf build', { requestId: 'r3' }), answers().answer)).status, 'pending');
    assert.equal(
      (await d.ask(ask('npm test', { sessionId: 's2', requestId: 'r4' }), answers().answer)).status,
      'pending',
    );
    // Session rules are not standing rules.
    assert.deepEqual(await d.rules(), []);
  });

  it('always stores a rule for the workspace root, listed and removable', async () => {
    const { desk: d } = await desk();
    const first = await d.ask(ask('git status'), answers().answer);
    await d.decide({ id: first.id, decision: 'always', by: 'cli' });
    const [rule] = await d.rules();
    assert.equal(rule?.rule, 'Bash(git status:*)');
    assert.equal(rule?.root, ROOT);
    assert.equal(rule?.source, 'cli');
    const other = await d.ask(ask('git status --short', { sessionId: 's9', requestId: 'x' }), answers().answer);
    assert.equal(other.status, 'allowed');
    const outside = await d.ask(
      ask('git status', { sessionId: 's9', requestId: 'y', workdir: '/elsewhere' }),
      answers().answer,
    );
    assert.equal(outside.status, 'pending', 'a rule holds for its root only');
    await d.removeRule(rule?.id ?? '');
    assert.deepEqual(await d.rules(), []);
    await assert.rejects(d.removeRule('nope'), (e: AppError) => e.kind === 'not_found');
  });

  it('a deny carries its message to the agent', async () => {
    const { desk: d } = await desk();
    const a = answers();
    const approval = await d.ask(ask('rm -rf /'), a.answer);
    const r = await d.decide({ id: approval.id, decision: 'deny', message: 'not on my machine', by: 'web' });
    assert.equal(r.approval.status, 'denied');
    assert.deepEqual(a.got, [{ allow: false, message: 'not on my machine' }]);
  });

  it('an unanswered request expires after timeoutMinutes and the agent is denied with that reason', async () => {
    const clock = new ManualClock(1_000);
    const { desk: d, events } = await desk({ timeoutMinutes: 2 }, clock);
    const a = answers();
    const approval = await d.ask(ask('npm publish'), a.answer);
    clock.advance(119_000);
    assert.equal(a.got.length, 0);
    clock.advance(1_000);
    await waitFor('the timeout to deny', () => a.got.length === 1);
    assert.deepEqual(a.got, [{ allow: false, message: 'No answer within 2 minutes; the tool call was denied.' }]);
    const [stored] = await d.list({});
    assert.equal(stored?.status, 'expired');
    assert.equal(stored?.decidedBy, 'timeout');
    assert.equal((await d.decide({ id: approval.id, decision: 'allow', by: 'cli' })).outcome, 'already');
    assert.equal(events.at(-1)?.type, 'decided');
  });

  it('config rules decide before anyone is asked: deny before allow, per root or global', async () => {
    const { desk: d } = await desk({
      autoAllow: ['Read', 'Bash(git:*)', { rule: 'Bash(make:*)', root: '/other' }],
      autoDeny: ['Bash(git push:*)'],
    });
    const read = await d.ask(ask('', { tool: 'Read', input: { file_path: `${ROOT}/a.ts` } }), answers().answer);
    assert.equal(read.status, 'allowed');
    assert.equal(read.decidedBy, 'rule:config:allow:0');
    const a = answers();
    const push = await d.ask(ask('git push origin main'), a.answer);
    assert.equal(push.status, 'denied');
    assert.equal(a.got[0]?.allow, false);
    assert.equal((await d.ask(ask('git log'), answers().answer)).status, 'allowed');
    // A deny rule catches a compound command when any part matches; an allow rule needs every part.
    assert.equal((await d.ask(ask('git log && git push'), answers().answer)).status, 'denied');
    assert.equal((await d.ask(ask('git log && curl x | sh'), answers().answer)).status, 'pending');
    assert.equal((await d.ask(ask('make'), answers().answer)).status, 'pending', 'a rule of another root');
    const rules = await d.rules();
    assert.deepEqual(
      rules.map((r) => [r.id, r.rule, r.behavior, r.root]),
      [
        ['config:deny:0', 'Bash(git push:*)', 'deny', null],
        ['config:allow:0', 'Read', 'allow', null],
        ['config:allow:1', 'Bash(git:*)', 'allow', null],
        ['config:allow:2', 'Bash(make:*)', 'allow', '/other'],
      ],
    );
    await assert.rejects(d.removeRule('config:allow:0'), (e: AppError) => e.kind === 'invalid_input');
  });

  it('the orchestrator may not decide unless approvals.agentMayDecide is true', async () => {
    const { desk: d } = await desk();
    const approval = await d.ask(ask('npm test'), answers().answer);
    await assert.rejects(
      d.decide({ id: approval.id, decision: 'allow', by: 'agent:orch-1' }),
      (e: AppError) => e.kind === 'forbidden' && /agentMayDecide/.test(e.message),
    );
    assert.equal((await d.pendingFor('s1'))?.id, approval.id);
    const { desk: trusting } = await desk({ agentMayDecide: true });
    const other = await trusting.ask(ask('npm test'), answers().answer);
    const r = await trusting.decide({ id: other.id, decision: 'allow', by: 'agent:orch-1' });
    assert.equal(r.approval.decidedBy, 'agent:orch-1');
  });

  it('a question is answered by option number or label, and the answer goes back as the tool input', async () => {
    const { desk: d } = await desk();
    const a = answers();
    const input = {
      questions: [
        {
          question: 'Which db?',
          header: 'DB',
          options: [{ label: 'SQLite' }, { label: 'Postgres' }],
          multiSelect: false,
        },
      ],
    };
    const q = await d.ask(ask('', { tool: 'AskUserQuestion', input }), a.answer);
    assert.equal(q.kind, 'question');
    assert.deepEqual(q.questions, [
      { question: 'Which db?', header: 'DB', options: ['SQLite', 'Postgres'], multiSelect: false },
    ]);
    await assert.rejects(d.decide({ id: q.id, decision: 'allow', answers: ['3'], by: 'cli' }), /not an option/);
    await assert.rejects(d.decide({ id: q.id, decision: 'allow-session', by: 'cli' }), /question/);
    const r = await d.decide({ id: q.id, decision: 'allow', answers: ['2'], by: 'telegram|42' });
    assert.equal(r.approval.message, 'Which db? → Postgres');
    assert.deepEqual(a.got, [{ allow: true, updatedInput: { ...input, answers: { 'Which db?': 'Postgres' } } }]);
  });

  it('a message sent into the session decides: yes allows, other text denies with it, an option answers a question', async () => {
    const { desk: d } = await desk();
    const a = answers();
    const one = await d.ask(ask('ls'), a.answer);
    await d.answerText(one.id, 'yes please', 'telegram|42');
    const two = await d.ask(ask('rm x', { requestId: 'r2' }), a.answer);
    await d.answerText(two.id, 'no, keep x', 'telegram|42');
    const input = { questions: [{ question: 'Go?', options: [{ label: 'Yes' }, { label: 'No' }] }] };
    const q = await d.ask(ask('', { tool: 'AskUserQuestion', input, requestId: 'q' }), a.answer);
    await d.answerText(q.id, 'no', 'web');
    assert.deepEqual(a.got, [
      { allow: true },
      { allow: false, message: 'no, keep x' },
      { allow: true, updatedInput: { ...input, answers: { 'Go?': 'No' } } },
    ]);
  });

  it('after a restart, pending requests are cancelled and listeners told; a session that ended cancels its own', async () => {
    const { desk: d, db } = await desk();
    const stale = await d.ask(ask('npm test'), answers().answer);
    const ended = await d.ask(ask('make', { sessionId: 's2', requestId: 'm' }), answers().answer);
    d.stop();
    const a = answers();
    const other = await d.ask(ask('ls', { sessionId: 's3', requestId: 'l' }), a.answer);
    await d.cancelSession('s3', 'The session ended before anyone answered.');
    assert.deepEqual(a.got, [{ allow: false, message: 'The session ended before anyone answered.' }]);
    assert.equal((await d.list({ status: 'cancelled' })).find((x) => x.id === other.id)?.decidedBy, 'session-ended');

    const events: ApprovalEvent[] = [];
    const next = new ApprovalDesk({
      db,
      clock: new ManualClock(5_000),
      logger: silentLogger(),
      config: approvalsSchema.parse({}),
      rootOf: () => ROOT,
    });
    next.on((e) => events.push(e));
    assert.equal(await next.cancelStale(), 2);
    const cancelled = await next.list({ status: 'cancelled' });
    assert.deepEqual(
      new Set(cancelled.filter((x) => x.decidedBy === 'restart').map((x) => x.id)),
      new Set([stale.id, ended.id]),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['decided', 'decided'],
    );
    assert.equal(await next.cancelStale(), 0);
  });
});

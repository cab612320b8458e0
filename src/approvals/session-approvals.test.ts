// Approvals through a real SessionManager (the test's database: SQLite, or PostgreSQL with TEST_DATABASE=postgres;
// real logs, scripted agent runs) and the chat notices.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { RecordingOutbox } from '../../test/support/recording-outbox.ts';
import { ScriptedHarness } from '../../test/support/scripted-harness.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { SessionManager } from '../coding/session-manager.ts';
import { ManualClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { ApprovalNotices } from '../notify/approval-notices.ts';
import { approveOperation } from '../operations/approvals.ts';
import { summarize } from '../operations/session-summary.ts';
import { CodingSessionStore } from '../store/coding-sessions.ts';
import { SessionLogs } from '../store/session-logs.ts';
import { ApprovalDesk } from './desk.ts';

let dir: { path: string; remove: () => void };
let manager: SessionManager;
let desk: ApprovalDesk;
let harness: ScriptedHarness;
let outbox: RecordingOutbox;
let notices: ApprovalNotices;
let workdir: string;
let logs: SessionLogs;
let close: () => Promise<void>;

beforeEach(async () => {
  dir = tempDir();
  workdir = join(dir.path, 'work');
  mkdirSync(workdir);
  const { config } = loadConfig({ home: dir.path, env: {}, overrides: { workspaces: [dir.path] } });
  const clock = new ManualClock();
  harness = new ScriptedHarness('claude');
  const opened = await openTestStore(join(dir.path, 'state.db'));
  desk = new ApprovalDesk({
    db: opened.db,
    clock,
    logger: silentLogger(),
    config: config.approvals,
    rootOf: () => dir.path,
  });
  logs = new SessionLogs(join(dir.path, 'logs'), { fsyncBatchMs: 0, now: () => clock.now() });
  manager = new SessionManager({
    config,
    clock,
    logger: silentLogger(),
    store: new CodingSessionStore(opened.db),
    logs,
    harnesses: { claude: harness, codex: new ScriptedHarness('codex'), gemini: new ScriptedHarness('gemini') },
    permissions: desk,
  });
  outbox = new RecordingOutbox();
  notices = new ApprovalNotices({ approvals: desk, sessions: manager, outbox, logger: silentLogger() });
  notices.start();
  close = async () => {
    await notices.stop();
    desk.stop();
    await manager.stop();
    await opened.close();
  };
});

afterEach(async () => {
  await close();
  dir.remove();
});

async function launchAsking() {
  const session = await manager.launch({
    prompt: 'fix the parser',
    name: 'fix-parser',
    workdir,
    originChannel: 'telegram|42',
    permissionMode: 'default',
  });
  const run = harness.last;
  await run.emit(
    { type: 'started', backendSessionId: 'b' },
    { type: 'permission', requestId: 'r1', tool: 'Bash', input: { command: 'npm test' } },
  );
  await waitFor('the approval to be pending', () => session.pendingPermission?.approval);
  return { session, run };
}

describe('approvals in coding sessions', () => {
  it('a request is stored, shown with buttons, decided once; the message is edited; session rule allows the next', async () => {
    const { session, run } = await launchAsking();
    assert.equal(session.waitingFor, 'permission');
    const approval = session.pendingPermission?.approval;
    assert.ok(approval);
    const summary = summarize(session.record, session, 0);
    assert.equal(summary.pendingApproval?.id, approval.id);
    await notices.idle();
    const [request] = outbox.deliveries;
    assert.equal(request?.to, 'telegram|42');
    assert.equal(request?.text.split('\n')[0], '🔐 [fix-parser] wants to run Bash: npm test');
    assert.deepEqual(
      request?.buttons?.flat().map((b) => [b.label, b.command]),
      [
        ['Allow', `/approve ${approval.id}`],
        ['Allow for session', `/approve ${approval.id} session`],
        ['Always', `/approve ${approval.id} always`],
        ['Deny', `/deny ${approval.id}`],
      ],
    );

    const decided = await desk.decide({ id: approval.id, decision: 'allow-session', by: 'telegram|42' });
    assert.equal(decided.outcome, 'decided');
    assert.deepEqual(run.answers, [{ requestId: 'r1', decision: { allow: true } }]);
    assert.equal(session.waitingFor, null);
    assert.equal((await desk.decide({ id: approval.id, decision: 'deny', by: 'web' })).outcome, 'already');
    await notices.idle();
    const edit = outbox.deliveries[1];
    assert.equal(edit?.replaces, `approval-${approval.id}-telegram|42`);
    assert.equal(edit?.text, '✅ [fix-parser] Bash: npm test\n   allowed for this session by telegram|42');
    assert.equal(edit?.buttons, undefined);

    // The same command with other arguments: allowed by the session rule, nobody asked, the session never waits.
    await run.emit({ type: 'permission', requestId: 'r2', tool: 'Bash', input: { command: 'npm test -- -u' } });
    await waitFor('the rule to answer', () => run.answers.length === 2);
    assert.deepEqual(run.answers[1], { requestId: 'r2', decision: { allow: true } });
    assert.equal(session.waitingFor, null);
    await notices.idle();
    assert.equal(outbox.deliveries.length, 2, 'a rule decision sends no chat message');
  });

  it('the session log records the request and who decided it', async () => {
    const { session } = await launchAsking();
    const approval = session.pendingPermission?.approval;
    assert.ok(approval);
    await desk.decide({ id: approval.id, decision: 'deny', message: 'not now', by: 'cli' });
    await notices.idle();
    const records = logs.read(session.id);
    const approvals = records
      .filter((r) => r.type === 'approval')
      .map((r) => (r.approval as { status: string }).status);
    assert.deepEqual(approvals, ['pending', 'denied']);
    const answer = records.find((r) => r.type === 'permissionAnswer');
    assert.deepEqual(
      { allow: answer?.allow, message: answer?.message, decidedBy: answer?.decidedBy },
      { allow: false, message: 'not now', decidedBy: 'cli' },
    );
  });

  it('a message sent into the waiting session decides its approval', async () => {
    const { session, run } = await launchAsking();
    const { result } = await manager.send(session.id, 'no, run the unit tests only', {
      source: 'user',
      by: 'telegram|42',
    });
    assert.equal(result, 'answered');
    assert.deepEqual(run.answers, [
      { requestId: 'r1', decision: { allow: false, message: 'no, run the unit tests only' } },
    ]);
    const [approval] = await desk.list({});
    assert.equal(approval?.status, 'denied');
    assert.equal(approval?.decidedBy, 'telegram|42');
  });

  it('killing a session with a pending approval cancels it', async () => {
    const { session } = await launchAsking();
    await manager.kill(session.id);
    await waitFor('the approval to be cancelled', async () => (await desk.list({}))[0]?.status === 'cancelled');
    const [approval] = await desk.list({});
    assert.equal(approval?.decidedBy, 'session-ended');
  });

  it('after a restart the pending request is cancelled and its chat message edited to say so', async () => {
    const { session } = await launchAsking();
    const approval = session.pendingPermission?.approval;
    assert.ok(approval);
    await notices.idle();
    // As the next process would: its desk finds the request pending in the store.
    assert.equal(await desk.cancelStale(), 1);
    await notices.idle();
    const edit = outbox.deliveries.at(-1);
    assert.equal(edit?.replaces, `approval-${approval.id}-telegram|42`);
    assert.match(edit?.text ?? '', /^🚫 \[fix-parser\] Bash: npm test\n {3}cancelled: the daemon restarted/);
  });

  it('an operation called by the orchestrator cannot decide unless approvals.agentMayDecide', async () => {
    const { session } = await launchAsking();
    const approval = session.pendingPermission?.approval;
    assert.ok(approval);
    const services = {
      config: loadConfig({ home: dir.path, env: {} }).config,
      sessions: manager,
      clock: new ManualClock(),
      approvals: desk,
    };
    await assert.rejects(
      approveOperation.run({ caller: { kind: 'agent', sessionId: 'orch' }, services }, { id: approval.id }),
      /agentMayDecide/,
    );
    await assert.rejects(manager.send(session.id, 'yes', { source: 'agent', by: 'agent:orch' }), /agentMayDecide/);
    const r = await approveOperation.run(
      { caller: { kind: 'chat', channel: 'telegram|42', userId: '42' }, services },
      {
        id: approval.id,
      },
    );
    assert.deepEqual([r.outcome, r.approval.decidedBy], ['decided', 'telegram|42']);
  });
});

// SessionPermissions with a scripted gate: the one pending request, what the gate's decision, storing and failure
// lead to, and the answers a message gives and how they are logged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { captureLogger } from '../../test/support/capture-logger.ts';
import type { Approval } from '../store/approvals.ts';
import type { PermissionDecision } from './harness.ts';
import type { PermissionAsk, PermissionGate } from './permission-gate.ts';
import { decisionOfText, permissionAnswerEntry, SessionPermissions } from './session-permissions.ts';

const ask: PermissionAsk = {
  sessionId: 's1',
  sessionName: 'one',
  workdir: '/w',
  requestId: 'p1',
  tool: 'Bash',
  input: {},
};

function approval(status: Approval['status'], decidedBy: string | null = null): Approval {
  return {
    id: 'a1',
    sessionId: 's1',
    session: 'one',
    kind: 'tool',
    tool: 'Bash',
    input: {},
    summary: 'Bash',
    questions: [],
    status,
    scope: null,
    decidedBy,
    message: null,
    createdAt: 0,
    decidedAt: null,
  };
}

/** A gate whose `ask` resolves (or rejects) as the test says, keeping the `answer` callback it was given. */
class ScriptedGate implements PermissionGate {
  answer: ((decision: PermissionDecision, approval: Approval) => void) | null = null;
  readonly asked: PermissionAsk[] = [];
  readonly reply: () => Promise<Approval>;
  constructor(reply: () => Promise<Approval>) {
    this.reply = reply;
  }
  ask(request: PermissionAsk, answer: (decision: PermissionDecision, approval: Approval) => void): Promise<Approval> {
    this.asked.push(request);
    this.answer = answer;
    return this.reply();
  }
  async answerText(): Promise<unknown> {
    return undefined;
  }
  async cancelSession(): Promise<void> {}
}

function rig(gate?: PermissionGate, active = () => true) {
  const capture = captureLogger();
  const stored: number[] = [];
  const decided: { requestId: string; decision: PermissionDecision; decidedBy: string }[] = [];
  const permissions = new SessionPermissions({
    ...(gate ? { gate } : {}),
    logger: capture.logger,
    isActive: active,
    onStored: () => stored.push(1),
    onDecided: (requestId, decision, decidedBy) => decided.push({ requestId, decision, decidedBy }),
  });
  return { permissions, stored, decided, capture };
}

/** Lets the gate's promise and its handlers run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('SessionPermissions', () => {
  it('holds one pending request; take hands it over only when it is the one named (or any, unnamed)', () => {
    const { permissions } = rig();
    assert.equal(permissions.gated, false);
    permissions.open('p1', 'Bash', { command: 'ls' });
    permissions.open('p2', 'Write', {});
    assert.equal(permissions.pending?.requestId, 'p2', 'a new request replaces the old');
    assert.equal(permissions.take('p1'), null);
    assert.equal(permissions.pending?.requestId, 'p2');
    assert.deepEqual(permissions.take('p2'), { requestId: 'p2', tool: 'Write', input: {} });
    assert.equal(permissions.pending, null);
    permissions.open('p3', 'Read', {});
    assert.equal(permissions.take()?.requestId, 'p3');
    permissions.open('p4', 'Read', {});
    permissions.clear();
    assert.equal(permissions.take(), null);
  });

  it('a request the gate stores as pending gets its approval and the session waits', async () => {
    const stored = approval('pending');
    const gate = new ScriptedGate(async () => stored);
    const r = rig(gate);
    r.permissions.open('p1', 'Bash', {});
    r.permissions.ask(ask);
    await settle();
    assert.deepEqual(gate.asked, [ask]);
    assert.equal(r.permissions.pending?.approval, stored);
    assert.equal(r.stored.length, 1);
    gate.answer?.({ allow: true }, approval('allowed', 'telegram|a|1'));
    assert.deepEqual(r.decided, [{ requestId: 'p1', decision: { allow: true }, decidedBy: 'telegram|a|1' }]);
  });

  it('no wait for a request decided by a rule, answered meanwhile, or of a session that ended', async () => {
    for (const [status, still, active] of [
      ['allowed', true, true],
      ['pending', false, true],
      ['pending', true, false],
    ] as const) {
      const gate = new ScriptedGate(async () => approval(status));
      const r = rig(gate, () => active);
      r.permissions.open('p1', 'Bash', {});
      r.permissions.ask(ask);
      if (!still) r.permissions.take('p1');
      await settle();
      assert.equal(r.stored.length, 0, `${status} ${still} ${active}`);
    }
  });

  it('a decision without a name is decided by "unknown"', () => {
    const gate = new ScriptedGate(() => new Promise<Approval>(() => {}));
    const r = rig(gate);
    r.permissions.ask(ask);
    gate.answer?.({ allow: false, message: 'no' }, approval('denied'));
    assert.deepEqual(r.decided, [{ requestId: 'p1', decision: { allow: false, message: 'no' }, decidedBy: 'unknown' }]);
  });

  it('a request the gate could not record is logged and denied (by "error")', async () => {
    const gate = new ScriptedGate(() => Promise.reject(new Error('disk full')));
    const r = rig(gate);
    r.permissions.open('p1', 'Bash', {});
    r.permissions.ask(ask);
    await settle();
    assert.deepEqual(r.decided, [
      {
        requestId: 'p1',
        decision: { allow: false, message: 'The approval request could not be recorded.' },
        decidedBy: 'error',
      },
    ]);
    assert.equal(r.capture.find('error', /recording an approval request failed/).length, 1);
  });

  it('a message answers: "yes", "allow", "ok"… allow; anything else denies with the text', () => {
    assert.deepEqual(decisionOfText('  Yes please'), { allow: true });
    assert.deepEqual(decisionOfText('ok'), { allow: true });
    assert.deepEqual(decisionOfText('yesterday'), { allow: false, message: 'yesterday' });
    assert.deepEqual(decisionOfText('not that file'), { allow: false, message: 'not that file' });
  });

  it('the answer record carries the message of a deny and who decided, when given', () => {
    assert.deepEqual(permissionAnswerEntry('p1', { allow: true }), {
      type: 'permissionAnswer',
      requestId: 'p1',
      allow: true,
    });
    assert.deepEqual(permissionAnswerEntry('p1', { allow: false, message: 'no' }, 'web|x'), {
      type: 'permissionAnswer',
      requestId: 'p1',
      allow: false,
      message: 'no',
      decidedBy: 'web|x',
    });
  });
});

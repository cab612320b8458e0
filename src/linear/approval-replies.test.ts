import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Approval } from '../approvals/approval.ts';
import { approvalElicitation, approvalOutcome, linearDecider, parseApprovalReply } from './approval-replies.ts';

const TOOL: Approval = {
  id: 'k3x9q',
  sessionId: 's1',
  session: 'eng-1-worker-1',
  kind: 'tool',
  tool: 'Bash',
  input: { command: 'npm test' },
  summary: 'Bash: npm test',
  questions: [],
  status: 'pending',
  scope: null,
  decidedBy: null,
  message: null,
  createdAt: 0,
  decidedAt: null,
};

const QUESTION: Approval = {
  ...TOOL,
  kind: 'question',
  tool: 'AskUserQuestion',
  summary: 'Which file?',
  questions: [{ question: 'Which file?', options: ['a.ts', 'No'], multiSelect: false }],
};

describe('parseApprovalReply', () => {
  it('reads the choices of a tool call as a person types them', () => {
    const cases: [string, ReturnType<typeof parseApprovalReply>][] = [
      ['allow', { kind: 'decide', decision: 'allow' }],
      ['Yes.', { kind: 'decide', decision: 'allow' }],
      ['@switchboard allow once', { kind: 'decide', decision: 'allow' }],
      ['Allow for session', { kind: 'decide', decision: 'allow-session' }],
      ['allow for this session!', { kind: 'decide', decision: 'allow-session' }],
      ['session', { kind: 'decide', decision: 'allow-session' }],
      ['always', { kind: 'decide', decision: 'always' }],
      ['Allow always', { kind: 'decide', decision: 'always' }],
      ['deny', { kind: 'decide', decision: 'deny' }],
      ['Deny: use rg instead', { kind: 'decide', decision: 'deny', message: 'use rg instead' }],
      ['no', { kind: 'decide', decision: 'deny' }],
      ['No, not on main', { kind: 'decide', decision: 'deny', message: 'No, not on main' }],
      ['yes but only in the tmp dir', { kind: 'text' }],
      ['nothing like that', { kind: 'text' }],
      ['please hold on', { kind: 'text' }],
    ];
    for (const [text, expected] of cases) assert.deepEqual(parseApprovalReply(TOOL, text), expected, text);
  });

  it('reads a question by option number or label before a deny, one line per question', () => {
    assert.deepEqual(parseApprovalReply(QUESTION, '1'), { kind: 'decide', decision: 'allow', answers: ['1'] });
    assert.deepEqual(parseApprovalReply(QUESTION, 'no'), { kind: 'decide', decision: 'allow', answers: ['no'] });
    assert.deepEqual(parseApprovalReply(QUESTION, 'deny: neither'), {
      kind: 'decide',
      decision: 'deny',
      message: 'neither',
    });
    assert.deepEqual(parseApprovalReply(QUESTION, 'the other one'), { kind: 'text' });
    const two: Approval = {
      ...QUESTION,
      questions: [...QUESTION.questions, { question: 'Which test?', options: ['unit', 'e2e'], multiSelect: true }],
    };
    assert.deepEqual(parseApprovalReply(two, 'a.ts\nunit, e2e'), {
      kind: 'decide',
      decision: 'allow',
      answers: ['a.ts', 'unit, e2e'],
    });
    assert.deepEqual(parseApprovalReply(two, '1'), { kind: 'text' });
  });
});

describe('approval texts in Linear', () => {
  it('spells the choices out as they are typed', () => {
    const text = approvalElicitation(TOOL);
    assert.match(text, /^🔐 \*\*eng-1-worker-1\*\* wants to run Bash: npm test \(approval k3x9q\)/);
    for (const choice of ['**allow**', '**allow for session**', '**always**', '**deny** *reason*'])
      assert.ok(text.includes(choice), choice);
    assert.match(approvalElicitation(QUESTION), /Which file\?\n1\. a\.ts\n2\. No\n\nReply with an option number/);
  });

  it('says the outcome in one line and names the Linear user who decided', () => {
    const decided: Approval = { ...TOOL, status: 'allowed', scope: 'session', decidedBy: 'linear|Ada' };
    assert.equal(
      approvalOutcome(decided),
      '✅ k3x9q [eng-1-worker-1] Bash: npm test — allowed for this session by linear|Ada',
    );
    assert.equal(linearDecider({ id: 'u1', name: 'Ada' }), 'linear|Ada');
    assert.equal(linearDecider({ id: 'u1', name: null }), 'linear|u1');
    assert.equal(linearDecider(null), 'linear|unknown');
  });
});

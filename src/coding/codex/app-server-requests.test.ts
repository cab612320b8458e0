import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ThreadItem } from './app-server-protocol.ts';
import { AppServerRequests } from './app-server-requests.ts';
import type { CodexApprovalMode } from './codex-args.ts';

type FileChange = Extract<ThreadItem, { type: 'fileChange' }>;

const patch = (path: string): FileChange => ({
  type: 'fileChange',
  id: 'p1',
  status: 'inProgress',
  changes: [{ path, kind: { type: 'add' } }],
});

function requests(mode: Partial<CodexApprovalMode> = {}, item?: FileChange): AppServerRequests {
  return new AppServerRequests({
    mode: { approvalPolicy: 'untrusted', sandbox: 'workspace-write', acceptEditsInWorkdir: false, ...mode },
    workdir: '/w',
    fileChange: (id) => (item?.id === id ? item : undefined),
  });
}

const params = { threadId: 't', turnId: 'u', itemId: 'p1' };

test('a command approval waits for its answer: allow → accept, once', () => {
  const r = requests();
  const handled = r.request(7, 'item/commandExecution/requestApproval', { ...params, command: 'ls' });
  assert.equal(handled.reply, undefined, 'nothing is answered before a person decides');
  assert.deepEqual(handled.events, [{ type: 'permission', requestId: 'u:7', tool: 'Bash', input: { command: 'ls' } }]);
  assert.deepEqual(r.answer('u:7', { allow: true }), { reply: { id: 7, result: { decision: 'accept' } } });
  assert.equal(r.answer('u:7', { allow: true }), null, 'answered once');
});

test('a deny → decline, with a steer carrying its message to the approval turn; a blank message steers nothing', () => {
  const r = requests();
  r.request(1, 'item/commandExecution/requestApproval', { ...params, command: 'ls' });
  r.request(2, 'item/commandExecution/requestApproval', { ...params, command: 'rm x' });
  assert.deepEqual(r.answer('u:1', { allow: false, message: '  not that  ' }), {
    reply: { id: 1, result: { decision: 'decline' } },
    steer: {
      threadId: 't',
      expectedTurnId: 'u',
      input: [{ type: 'text', text: 'Permission denied: not that', text_elements: [] }],
    },
  });
  assert.deepEqual(r.answer('u:2', { allow: false, message: ' ' }), {
    reply: { id: 2, result: { decision: 'decline' } },
  });
});

test('acceptEdits accepts a patch inside the workdir at once and asks for one outside it; default always asks', () => {
  const inside = requests({ acceptEditsInWorkdir: true }, patch('/w/a.txt')).request(
    3,
    'item/fileChange/requestApproval',
    params,
  );
  assert.deepEqual(inside, { reply: { id: 3, result: { decision: 'accept' } }, events: [{ type: 'activity' }] });
  const outside = requests({ acceptEditsInWorkdir: true }, patch('/etc/a.txt')).request(
    4,
    'item/fileChange/requestApproval',
    params,
  );
  assert.equal(outside.reply, undefined);
  assert.equal(outside.events[0]?.type, 'permission');
  const asked = requests({}, patch('/w/a.txt')).request(5, 'item/fileChange/requestApproval', params);
  assert.deepEqual(asked.events[0]?.type === 'permission' && asked.events[0].tool, 'Edit');
});

test('resolved and clear forget pending requests; the question answer goes to every question', () => {
  const r = requests();
  r.request(1, 'item/commandExecution/requestApproval', { ...params, command: 'ls' });
  r.resolved(1);
  assert.equal(r.answer('u:1', { allow: true }), null);
  const questions = [
    { id: 'a', question: 'One?' },
    { id: 'b', question: 'Two?' },
  ];
  assert.deepEqual(r.request('q', 'item/tool/requestUserInput', { ...params, questions }).events, [
    { type: 'question', text: 'One?\nTwo?' },
  ]);
  assert.deepEqual(r.answerQuestion('yes'), {
    id: 'q',
    result: { answers: { a: { answers: ['yes'] }, b: { answers: ['yes'] } } },
  });
  assert.equal(r.answerQuestion('again'), null);
  r.request(2, 'item/commandExecution/requestApproval', { ...params, command: 'ls' });
  r.clear();
  assert.equal(r.answer('u:2', { allow: true }), null);
});

test('requests not offered and malformed ones are refused with a JSON-RPC error and a warning', () => {
  const r = requests();
  const other = r.request(9, 'item/permissions/requestApproval', params);
  assert.deepEqual(other.reply, {
    id: 9,
    error: { code: -32601, message: 'switchboard does not handle item/permissions/requestApproval' },
  });
  assert.equal(other.events[0]?.type, 'warning');
  const bad = r.request(10, 'item/commandExecution/requestApproval', { command: 'ls' });
  assert.deepEqual(bad.reply, {
    id: 10,
    error: { code: -32602, message: 'switchboard could not read item/commandExecution/requestApproval' },
  });
  assert.equal(bad.events[0]?.type === 'warning' && bad.events[0].malformed, true);
});

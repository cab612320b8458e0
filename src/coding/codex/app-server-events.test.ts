import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AppServerEvents,
  commandPermission,
  execItem,
  patchInside,
  patchPermission,
  turnOutcome,
  unwrapShell,
} from './app-server-events.ts';
import { decodeAppServerLine } from './app-server-protocol.ts';
import { CodexUsageTracker } from './codex-usage.ts';

const approval = { threadId: 't', turnId: 'u', itemId: 'call_1' };

test('unwrapShell: the script of bash -lc / sh -c with its quoting removed; anything else as it is', () => {
  assert.equal(unwrapShell("/bin/bash -lc 'npm test'"), 'npm test');
  assert.equal(unwrapShell("/bin/bash -lc 'echo '\\''hi'\\'' && ls'"), "echo 'hi' && ls");
  assert.equal(unwrapShell('bash -c "say \\"x\\" \\$HOME"'), 'say "x" $HOME');
  assert.equal(unwrapShell('/usr/bin/zsh -lc npm\\ test'), 'npm test');
  assert.equal(unwrapShell('sh -c ls'), 'ls');
  assert.equal(unwrapShell("/bin/bash -lc 'a' b"), "/bin/bash -lc 'a' b", 'two words: not unwrapped');
  assert.equal(unwrapShell("/bin/bash -lc 'a'; rm x"), "/bin/bash -lc 'a'; rm x");
  assert.equal(unwrapShell("/bin/bash -lc 'open"), "/bin/bash -lc 'open", 'an open quote: not unwrapped');
  assert.equal(unwrapShell('npm test'), 'npm test');
  assert.equal(unwrapShell('python -c print(1)'), 'python -c print(1)');
});

test('a command approval is Bash {command, cwd, reason} with the wrapper taken off', () => {
  const params = { ...approval, command: "/bin/bash -lc 'npm test -- --watch'", cwd: '/w', reason: 'needs network' };
  assert.deepEqual(commandPermission('u:0', params), {
    type: 'permission',
    requestId: 'u:0',
    tool: 'Bash',
    input: { command: 'npm test -- --watch', cwd: '/w', reason: 'needs network' },
  });
  const actions = { ...approval, commandActions: [{ command: 'ls' }, { command: 'wc -l' }] };
  assert.deepEqual(commandPermission('u:1', actions).input, { command: 'ls && wc -l' }, 'no command: its actions');
});

test('a patch approval is Edit: file_path only for one file, file_paths and changes from the started item', () => {
  const item = {
    type: 'fileChange' as const,
    id: 'call_1',
    status: 'inProgress',
    changes: [{ path: '/w/a.ts', kind: { type: 'update' }, diff: '@@ -1 +1 @@' }],
  };
  assert.deepEqual(patchPermission('u:2', { ...approval, reason: null }, item), {
    type: 'permission',
    requestId: 'u:2',
    tool: 'Edit',
    input: {
      file_path: '/w/a.ts',
      file_paths: ['/w/a.ts'],
      changes: [{ path: '/w/a.ts', kind: 'update', diff: '@@ -1 +1 @@' }],
    },
  });
  const two = { ...item, changes: [...item.changes, { path: '/w/b.ts', kind: { type: 'add' } }] };
  const input = patchPermission('u:3', { ...approval, grantRoot: '/w' }, two).input as Record<string, unknown>;
  assert.equal('file_path' in input, false, 'a rule on one path must not allow a patch of two');
  assert.deepEqual(input.file_paths, ['/w/a.ts', '/w/b.ts']);
  assert.equal(input.grant_root, '/w');
  assert.deepEqual(patchPermission('u:4', approval, undefined).input, { file_paths: [], changes: [] });
});

test('patchInside: every path inside the workdir (relative ones resolved there); none known is not inside', () => {
  const item = (...paths: string[]) => ({
    type: 'fileChange' as const,
    id: 'i',
    status: 'inProgress',
    changes: paths.map((path) => ({ path, kind: { type: 'add' } })),
  });
  assert.equal(patchInside(item('/w/a.ts', 'src/b.ts'), '/w'), true);
  assert.equal(patchInside(item('/w/a.ts', '/etc/passwd'), '/w'), false);
  assert.equal(patchInside(item('../x'), '/w'), false);
  assert.equal(patchInside(item('/w'), '/w'), false);
  assert.equal(patchInside(item(), '/w'), false);
  assert.equal(patchInside(undefined, '/w'), false);
});

test('turnOutcome: completed, interrupted, failed through codexFailure, an HTTP status from codexErrorInfo', () => {
  assert.deepEqual(turnOutcome('completed', null), { ok: true });
  assert.deepEqual(turnOutcome('interrupted', null), { ok: false, reason: 'interrupted', message: 'interrupted' });
  assert.deepEqual(turnOutcome('failed', { message: 'unexpected status 401 Unauthorized: no' }), {
    ok: false,
    reason: 'api_error',
    message: 'unexpected status 401 Unauthorized: no',
    apiErrorStatus: 401,
  });
  const info = { responseStreamConnectionFailed: { httpStatusCode: 429 } };
  assert.deepEqual(turnOutcome('failed', { message: 'too many', codexErrorInfo: info }), {
    ok: false,
    reason: 'api_error',
    message: 'too many',
    apiErrorStatus: 429,
  });
  assert.deepEqual(turnOutcome('failed', { message: 'boom', codexErrorInfo: 'other' }), {
    ok: false,
    reason: 'execution_error',
    message: 'boom',
  });
});

test('execItem: app-server items in the exec shapes', () => {
  assert.deepEqual(
    execItem({
      type: 'commandExecution',
      id: 'c',
      command: 'ls',
      aggregatedOutput: 'x',
      exitCode: 0,
      status: 'completed',
    }),
    { type: 'command_execution', id: 'c', command: 'ls', aggregated_output: 'x', exit_code: 0, status: 'completed' },
  );
  assert.deepEqual(
    execItem({
      type: 'mcpToolCall',
      id: 'm',
      server: 's',
      tool: 't',
      arguments: { a: 1 },
      result: { content: [{ type: 'text', text: 'ok' }], structuredContent: { n: 1 } },
      error: null,
      status: 'completed',
    }),
    {
      type: 'mcp_tool_call',
      id: 'm',
      server: 's',
      tool: 't',
      arguments: { a: 1 },
      result: { content: [{ type: 'text', text: 'ok' }], structured_content: { n: 1 } },
      error: null,
      status: 'completed',
    },
  );
  assert.deepEqual(execItem({ type: 'webSearch', id: 'w', query: 'q' }), { type: 'web_search', id: 'w', query: 'q' });
});

/** A notification as the server prints it, decoded. */
function note(method: string, params: Record<string, unknown>): [string, unknown] {
  const decoded = decodeAppServerLine(JSON.stringify({ method, params }));
  assert.ok(decoded.ok && decoded.message.kind === 'notification');
  return [decoded.message.method, decoded.message.params];
}

const command = (status: string, extra: Record<string, unknown> = {}) => ({
  type: 'commandExecution',
  id: 'call_1',
  command: "/bin/bash -lc 'ls'",
  cwd: '/w',
  status,
  aggregatedOutput: null,
  exitCode: null,
  ...extra,
});
const totals = (input: number, output: number) => ({
  tokenUsage: {
    total: { totalTokens: input + output, inputTokens: input, cachedInputTokens: 0, outputTokens: output },
    last: { totalTokens: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
  },
});

test('a turn: tool → toolResult → text → turnEnd with the turn usage from the thread totals', () => {
  const events = new AppServerEvents({ usage: new CodexUsageTracker({ known: true }) });
  const run = (method: string, params: Record<string, unknown>) => events.notification(...note(method, params));
  assert.deepEqual(run('item/started', { turnId: 'u', item: command('inProgress') }), [
    { type: 'tool', id: 'call_1', name: 'shell', input: { command: "/bin/bash -lc 'ls'" } },
  ]);
  assert.deepEqual(run('item/completed', { turnId: 'u', item: command('declined') }), [
    { type: 'toolResult', id: 'call_1', isError: true, output: '' },
  ]);
  assert.deepEqual(run('item/completed', { turnId: 'u', item: { type: 'agentMessage', id: 'm', text: 'done' } }), [
    { type: 'text', text: 'done' },
  ]);
  assert.deepEqual(run('item/started', { turnId: 'u', item: { type: 'reasoning', id: 'r' } }), [{ type: 'activity' }]);
  run('thread/tokenUsage/updated', { turnId: 'u', ...totals(100, 10) });
  run('thread/tokenUsage/updated', { turnId: 'u', ...totals(200, 20) });
  const completed = { id: 'u', status: 'completed', error: null };
  assert.deepEqual(run('turn/completed', { threadId: 't', turn: completed }), [
    {
      type: 'turnEnd',
      outcome: { ok: true },
      costUsd: 0,
      usage: { inputTokens: 200, outputTokens: 20, cachedInputTokens: 0 },
    },
  ]);
  run('thread/tokenUsage/updated', { turnId: 'v', ...totals(300, 30) });
  assert.deepEqual(run('turn/completed', { threadId: 't', turn: { ...completed, id: 'v' } })[0], {
    type: 'turnEnd',
    outcome: { ok: true },
    costUsd: 0,
    usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 },
  });
  const failed = { id: 'w', status: 'failed', error: { message: 'boom' } };
  assert.deepEqual(run('turn/completed', { threadId: 't', turn: failed }), [
    { type: 'turnEnd', outcome: { ok: false, reason: 'execution_error', message: 'boom' }, costUsd: 0 },
  ]);
});

test('warnings, errors, unknown and malformed notifications', () => {
  const events = new AppServerEvents({ usage: new CodexUsageTracker({ known: true }) });
  const run = (method: string, params: Record<string, unknown>) => events.notification(...note(method, params));
  assert.deepEqual(run('warning', { threadId: 't', message: 'careful' }), [
    { type: 'warning', message: 'Codex warning: careful' },
  ]);
  assert.deepEqual(
    run('error', { error: { message: 'Reconnecting 1/5' }, willRetry: true, threadId: 't', turnId: 'u' }),
    [{ type: 'warning', message: 'Codex error (retrying): Reconnecting 1/5' }],
  );
  assert.deepEqual(run('configWarning', { summary: 'no bwrap', details: null }), [
    { type: 'warning', message: 'Codex config: no bwrap' },
  ]);
  assert.deepEqual(run('item/agentMessage/delta', { delta: 'x' }), [{ type: 'activity' }]);
  const [bad] = run('turn/completed', { threadId: 't', turn: { id: 'u', status: 'exploded' } });
  assert.equal(bad?.type === 'warning' && bad.malformed, true);
  const [badItem] = run('item/completed', { turnId: 'u', item: { type: 'commandExecution', id: 'c' } });
  assert.equal(badItem?.type === 'warning' && badItem.malformed, true);
});

test('the fileChange items started in a turn are remembered for the patch approval that names them', () => {
  const events = new AppServerEvents({ usage: new CodexUsageTracker({ known: true }) });
  const item = {
    type: 'fileChange',
    id: 'p',
    status: 'inProgress',
    changes: [{ path: '/w/a', kind: { type: 'add' }, diff: 'x' }],
  };
  events.notification(...note('item/started', { turnId: 'u', item }));
  assert.deepEqual(events.fileChange('p')?.changes[0]?.path, '/w/a');
  events.notification(
    ...note('turn/completed', { threadId: 't', turn: { id: 'u', status: 'completed', error: null } }),
  );
  assert.equal(events.fileChange('p'), undefined, 'forgotten once the turn is over');
});

test('decodeAppServerLine: responses, errors, server requests, notifications, and what is malformed', () => {
  assert.deepEqual(decodeAppServerLine('{"id":1,"result":{"a":1}}'), {
    ok: true,
    message: { kind: 'response', id: 1, result: { a: 1 } },
  });
  assert.deepEqual(decodeAppServerLine('{"id":2,"error":{"code":-1,"message":"no"}}'), {
    ok: true,
    message: { kind: 'error', id: 2, message: 'no' },
  });
  assert.deepEqual(decodeAppServerLine('{"id":0,"method":"item/fileChange/requestApproval","params":{}}'), {
    ok: true,
    message: { kind: 'request', id: 0, method: 'item/fileChange/requestApproval', params: {} },
  });
  assert.deepEqual(decodeAppServerLine('{"method":"turn/started","params":{}}'), {
    ok: true,
    message: { kind: 'notification', method: 'turn/started', params: {} },
  });
  assert.deepEqual(decodeAppServerLine('nope'), { ok: false, error: 'not JSON' });
  assert.deepEqual(decodeAppServerLine('[1]'), { ok: false, error: 'not a JSON object' });
  assert.deepEqual(decodeAppServerLine('{"x":1}'), { ok: false, error: 'neither a "method" nor an "id"' });
});

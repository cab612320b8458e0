import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ExitInfo } from '../agent-process.ts';
import type { HarnessEvent } from '../harness.ts';
import { codexFailure, CodexTurnParser, parseCodexLine } from './codex-events.ts';
import { CodexUsageTracker } from './codex-usage.ts';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'agent-streams');
const ok: ExitInfo = { code: 0, signal: null };

function capture(name: string): string[] {
  return readFileSync(join(fixtures, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean);
}

/** Feeds lines then the exit to a fresh parser (new thread unless a tracker is given); returns every event. */
function run(lines: string[], exit: ExitInfo = ok, usage = new CodexUsageTracker({ known: true })): HarnessEvent[] {
  const parser = new CodexTurnParser({ usage });
  const events = lines.flatMap((line) => parser.line(line));
  return [...events, ...parser.exit(exit)];
}

const meaningful = (events: HarnessEvent[]): HarnessEvent[] => events.filter((e) => e.type !== 'activity');
const line = (object: unknown): string => JSON.stringify(object);
const thread = line({ type: 'thread.started', thread_id: 't-1' });
const item = (phase: string, value: Record<string, unknown>): string => line({ type: `item.${phase}`, item: value });
const completed = (input: number, output: number, cached = 0): string =>
  line({
    type: 'turn.completed',
    usage: {
      input_tokens: input,
      cached_input_tokens: cached,
      cache_write_input_tokens: 0,
      output_tokens: output,
      reasoning_output_tokens: 0,
    },
  });
const METADATA =
  'Codex warning: Model metadata for `mock-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.';

test('run1: started, the error item as a warning, one text, turnEnd ok with usage — held until the exit', () => {
  const parser = new CodexTurnParser({ usage: new CodexUsageTracker({ known: true }) });
  const beforeExit = capture('codex-run1').flatMap((l) => parser.line(l));
  assert.equal(
    beforeExit.some((e) => e.type === 'turnEnd'),
    false,
    'the turnEnd waits for the exit code',
  );
  assert.deepEqual(meaningful([...beforeExit, ...parser.exit(ok)]), [
    { type: 'started', backendSessionId: '01a2033c-4081-7bb0-9f1d-9a90b5d7549d' },
    { type: 'warning', message: METADATA },
    { type: 'text', text: 'MOCK CODEX REPLY' },
    {
      type: 'turnEnd',
      outcome: { ok: true },
      costUsd: 0,
      usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 20 },
    },
  ]);
});

test('run2: command_execution started/completed → tool/toolResult paired by item id, then text, then turnEnd', () => {
  const events = meaningful(run(capture('codex-run2'))).filter((e) => e.type !== 'warning');
  assert.deepEqual(
    events.map((e) => e.type),
    ['started', 'tool', 'toolResult', 'text', 'turnEnd'],
  );
  assert.deepEqual(events[1], {
    type: 'tool',
    id: 'item_1',
    name: 'shell',
    input: { command: "/bin/bash -lc 'echo hello-from-codex-tool'" },
  });
  assert.deepEqual(events[2], {
    type: 'toolResult',
    id: 'item_1',
    isError: false,
    output: "pyenv: cannot rehash: /home/user/.pyenv/shims isn't writable\nhello-from-codex-tool\n",
  });
  assert.match((events[3] as { text: string }).text, /^codex tool output was: /);
});

test('model from the run is reported on started', () => {
  const parser = new CodexTurnParser({ usage: new CodexUsageTracker({ known: true }), model: 'gpt-x' });
  assert.deepEqual(parser.line(thread), [{ type: 'started', backendSessionId: 't-1', model: 'gpt-x' }]);
});

test('usage is cumulative per thread: a resumed turn reports the delta from the previous turn', () => {
  const usage = new CodexUsageTracker({ known: true });
  const first = run([thread, completed(200, 20, 40)], ok, usage).at(-1);
  const second = run([thread, completed(300, 30, 40)], ok, usage).at(-1);
  assert.deepEqual((first as { usage: unknown }).usage, { inputTokens: 200, outputTokens: 20, cachedInputTokens: 40 });
  assert.deepEqual((second as { usage: unknown }).usage, { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 });
});

test('a thread resumed by id with unknown earlier totals: no usage on its first turn, deltas afterwards', () => {
  const usage = new CodexUsageTracker({ known: false });
  const first = run([thread, completed(300, 30)], ok, usage).at(-1) as { usage?: unknown };
  assert.equal(first.usage, undefined);
  const second = run([thread, completed(450, 35)], ok, usage).at(-1) as { usage?: unknown };
  assert.deepEqual(second.usage, { inputTokens: 150, outputTokens: 5, cachedInputTokens: 0 });
});

test('a completed tool item without a started one yields tool + toolResult; a repeated started is not a second tool', () => {
  const change = {
    id: 'item_3',
    type: 'file_change',
    changes: [
      { path: '/w/a.txt', kind: 'add' },
      { path: '/w/b.txt', kind: 'update' },
    ],
    status: 'completed',
  };
  const search = {
    id: 'ws_1',
    type: 'web_search',
    query: 'weather paris',
    action: { type: 'search', query: 'weather paris' },
  };
  const events = meaningful(
    run([
      thread,
      item('completed', change),
      item('started', search),
      item('started', search),
      item('completed', search),
      completed(1, 1),
    ]),
  );
  assert.deepEqual(events.slice(1, 5), [
    { type: 'tool', id: 'item_3', name: 'apply_patch', input: { path: '/w/a.txt, /w/b.txt', changes: change.changes } },
    { type: 'toolResult', id: 'item_3', isError: false, output: 'add /w/a.txt\nupdate /w/b.txt' },
    { type: 'tool', id: 'ws_1', name: 'web_search', input: { query: 'weather paris' } },
    { type: 'toolResult', id: 'ws_1', isError: false },
  ]);
});

test('tool errors: exit_code ≠ 0, status failed, MCP error; MCP names and result text', () => {
  const failedCommand = {
    id: 'c1',
    type: 'command_execution',
    command: 'exit 3',
    aggregated_output: '',
    exit_code: 3,
    status: 'failed',
  };
  const failedPatch = { id: 'p1', type: 'file_change', changes: [{ path: 'x', kind: 'delete' }], status: 'failed' };
  const mcpOk = {
    id: 'm1',
    type: 'mcp_tool_call',
    server: 'docs',
    tool: 'search',
    arguments: { q: 'x' },
    result: { content: [{ type: 'text', text: 'found' }] },
    status: 'completed',
  };
  const mcpBad = {
    id: 'm2',
    type: 'mcp_tool_call',
    server: 'docs',
    tool: 'search',
    arguments: {},
    error: { message: 'boom' },
    status: 'failed',
  };
  const events = run([
    thread,
    ...[failedCommand, failedPatch, mcpOk, mcpBad].flatMap((i) => [item('started', i), item('completed', i)]),
  ]);
  const results = events.filter((e) => e.type === 'toolResult');
  assert.deepEqual(
    results.map((r) => [r.id, r.isError, r.output]),
    [
      ['c1', true, ''],
      ['p1', true, 'delete x'],
      ['m1', false, 'found'],
      ['m2', true, 'boom'],
    ],
  );
  assert.deepEqual(
    events.filter((e) => e.type === 'tool').map((t) => t.name),
    ['shell', 'apply_patch', 'mcp:docs/search', 'mcp:docs/search'],
  );
  assert.deepEqual(
    events.find((e) => e.type === 'tool' && e.id === 'm1'),
    { type: 'tool', id: 'm1', name: 'mcp:docs/search', input: { q: 'x' } },
  );
});

test('request_user_input → one question; reasoning, todo_list, plan, item.updated and unknown types → activity', () => {
  const ask = {
    id: 'q1',
    type: 'request_user_input',
    call_id: 'call_1',
    questions: [{ id: 'file', header: 'File', question: 'Which file should I change?' }],
  };
  const events = run([
    thread,
    item('started', ask),
    item('completed', ask),
    item('completed', { id: 'r1', type: 'reasoning', text: 'thinking' }),
    item('updated', { id: 't1', type: 'todo_list', items: [{ text: 'a', completed: false }] }),
    item('completed', { id: 'pl', type: 'plan', text: 'the plan' }),
    item('started', { id: 'am', type: 'agent_message', text: '' }),
    item('completed', { id: 'x1', type: 'collab_tool_call', whatever: 1 }),
    line({ type: 'item.plan.delta', delta: 'x' }),
  ]);
  assert.deepEqual(meaningful(events).slice(1), [{ type: 'question', text: 'Which file should I change?' }]);
  assert.equal(events.length, 9);
});

test('a top-level error is a warning, never the end of the turn', () => {
  const events = run([
    thread,
    line({ type: 'error', message: 'Reconnecting... 2/5 (stream disconnected)' }),
    completed(10, 1),
  ]);
  assert.deepEqual(meaningful(events).slice(1), [
    { type: 'warning', message: 'Codex error: Reconnecting... 2/5 (stream disconnected)' },
    {
      type: 'turnEnd',
      outcome: { ok: true },
      costUsd: 0,
      usage: { inputTokens: 10, outputTokens: 1, cachedInputTokens: 0 },
    },
  ]);
});

test('turn.failed from an HTTP 400 (the real CLI prints the bare JSON body) → api_error 400, whatever the exit code', () => {
  const body = '{"error":{"message":"mock bad request","type":"invalid_request_error","param":null,"code":null}}';
  const events = run(
    [thread, line({ type: 'error', message: body }), line({ type: 'turn.failed', error: { message: body } })],
    { code: 1, signal: null },
  );
  assert.deepEqual(events.at(-1), {
    type: 'turnEnd',
    outcome: { ok: false, reason: 'api_error', message: body, apiErrorStatus: 400 },
    costUsd: 0,
  });
});

test('codexFailure: statuses in the message, 500 and context-window wording, everything else an execution_error', () => {
  const unauthorized =
    'unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses, request id: r1';
  assert.deepEqual(codexFailure(unauthorized), {
    ok: false,
    reason: 'api_error',
    message: unauthorized,
    apiErrorStatus: 401,
  });
  assert.equal(
    codexFailure('exceeded retry limit, last status: 429 Too Many Requests, request id: r').apiErrorStatus,
    429,
  );
  const demand = codexFailure('We’re currently experiencing high demand, which may cause temporary errors.');
  assert.deepEqual([demand.reason, demand.apiErrorStatus], ['api_error', undefined]);
  assert.equal(
    codexFailure("Codex ran out of room in the model's context window. Start a new thread…").reason,
    'api_error',
  );
  assert.deepEqual(codexFailure('sandbox setup failed'), {
    ok: false,
    reason: 'execution_error',
    message: 'sandbox setup failed',
  });
  assert.equal(codexFailure('{"not":"an error body"}').reason, 'execution_error');
});

test('exit code rule: turn.completed then exit 1 → execution_error; then a signal → still ok', () => {
  const failed = run([thread, completed(1, 1)], { code: 1, signal: null }).at(-1) as { outcome: unknown };
  assert.deepEqual(failed.outcome, {
    ok: false,
    reason: 'execution_error',
    message: 'Codex exited with code 1 after reporting the turn completed',
  });
  const stopped = run([thread, completed(1, 1)], { code: null, signal: 'SIGTERM' }).at(-1) as { outcome: unknown };
  assert.deepEqual(stopped.outcome, { ok: true });
});

test('no turn.completed / turn.failed: nothing owed at exit (PerTurnRun reports the crash or the interrupt)', () => {
  assert.deepEqual(
    run([thread, line({ type: 'turn.started' })], { code: 3, signal: null }).filter((e) => e.type === 'turnEnd'),
    [],
  );
  assert.deepEqual(
    run([thread], { code: null, signal: 'SIGTERM' }).filter((e) => e.type === 'turnEnd'),
    [],
  );
});

test('garbage lines → malformed warnings, never a throw, the turn still ends', () => {
  const events = run([
    thread,
    'not json at all',
    '[1,2]',
    '{"no":"type"}',
    line({ type: 'thread.started' }),
    line({ type: 'item.completed', item: { id: 'x', type: 'agent_message', text: 42 } }),
    line({ type: 'item.started', item: 'nope' }),
    line({ type: 'turn.failed', error: 'no object' }),
    completed(1, 1),
  ]);
  const warnings = events.filter((e) => e.type === 'warning');
  assert.equal(warnings.length, 7);
  for (const w of warnings) assert.equal((w as { malformed?: boolean }).malformed, true);
  assert.match((warnings[4] as { message: string }).message, /bad "item.completed:agent_message"/);
  assert.deepEqual((events.at(-1) as { outcome: unknown }).outcome, { ok: true });
});

test('parseCodexLine keeps unknown line and item types', () => {
  assert.deepEqual(parseCodexLine('{"type":"future.thing"}'), {
    ok: true,
    line: { kind: 'unknown', type: 'future.thing' },
  });
  assert.deepEqual(parseCodexLine('{"type":"item.started","item":{"id":"a","type":"new_kind"}}'), {
    ok: true,
    line: { kind: 'unknown', type: 'item.started:new_kind' },
  });
  assert.equal(parseCodexLine('{"type":"turn.completed","usage":{"input_tokens":-1,"output_tokens":0}}').ok, false);
});

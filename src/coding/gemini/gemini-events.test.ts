import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ExitInfo } from '../agent-process.ts';
import type { HarnessEvent } from '../harness.ts';
import type { GeminiResult } from './gemini-events.ts';
import { geminiOutcome, GeminiTurnParser, parseGeminiLine } from './gemini-events.ts';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'agent-streams');
const ok: ExitInfo = { code: 0, signal: null };

function capture(name: string): string[] {
  return readFileSync(join(fixtures, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean);
}

/** Feeds lines then the exit to a fresh parser; returns every event. */
function run(lines: string[], exit: ExitInfo = ok): HarnessEvent[] {
  const parser = new GeminiTurnParser();
  const events = lines.flatMap((line) => parser.line(line));
  return [...events, ...parser.exit(exit)];
}

const meaningful = (events: HarnessEvent[]): HarnessEvent[] => events.filter((e) => e.type !== 'activity');
const line = (object: unknown): string => JSON.stringify(object);
const delta = (content: string): string => line({ type: 'message', role: 'assistant', content, delta: true });
const init = line({ type: 'init', session_id: 'sid-1', model: 'auto' });
const success = line({ type: 'result', status: 'success', stats: { input_tokens: 7, output_tokens: 3, cached: 2 } });

test('run1: init → started, user echo → activity, one text, result → turnEnd ok with usage, held until exit', () => {
  const parser = new GeminiTurnParser();
  const lines = capture('gemini-run1');
  const beforeExit = lines.flatMap((l) => parser.line(l));
  assert.equal(
    beforeExit.some((e) => e.type === 'turnEnd'),
    false,
    'the turnEnd waits for the exit code',
  );
  const events = meaningful([...beforeExit, ...parser.exit(ok)]);
  assert.deepEqual(events, [
    { type: 'started', backendSessionId: '8495da9a-e44a-4215-8246-145141a962df', model: 'auto' },
    { type: 'text', text: 'MOCK GEMINI REPLY' },
    {
      type: 'turnEnd',
      outcome: { ok: true },
      costUsd: 0,
      usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 },
    },
  ]);
  assert.equal(beforeExit[1]?.type, 'activity');
});

test('run2: tool_use/tool_result pair by id, then the text, then turnEnd', () => {
  const events = meaningful(run(capture('gemini-run2')));
  const id = 'run_shell_command__run_shell_command_1795350852549_0';
  assert.deepEqual(
    events.map((e) => e.type),
    ['started', 'tool', 'toolResult', 'text', 'turnEnd'],
  );
  assert.deepEqual(events[1], {
    type: 'tool',
    id,
    name: 'run_shell_command',
    input: { command: 'echo hello-from-gemini-tool', description: 'echo' },
  });
  assert.deepEqual(events[2], { type: 'toolResult', id, isError: false, output: 'hello-from-gemini-tool' });
  assert.match((events[3] as { text: string }).text, /^gemini tool said: /);
  assert.deepEqual((events[4] as { usage?: unknown }).usage, {
    inputTokens: 150,
    outputTokens: 15,
    cachedInputTokens: 0,
  });
});

test('run3 (resumed): same session id as run2', () => {
  const started = run(capture('gemini-run3')).find((e) => e.type === 'started');
  assert.deepEqual(started, {
    type: 'started',
    backendSessionId: '2a16e5f6-f400-416a-93cd-bf8a3d894600',
    model: 'auto',
  });
});

test('delta chunks coalesce into one text per assistant message, split by non-message events', () => {
  const events = meaningful(
    run([
      init,
      line({ type: 'message', role: 'user', content: 'hi' }),
      delta('Hel'),
      delta('lo, '),
      delta('world'),
      line({ type: 'tool_use', tool_name: 'read_file', tool_id: 't1', parameters: { path: 'a' } }),
      line({
        type: 'tool_result',
        tool_id: 't1',
        status: 'error',
        error: { type: 'FILE_NOT_FOUND', message: 'no such file' },
      }),
      delta('Second '),
      delta('message'),
      success,
    ]),
  );
  assert.deepEqual(
    events.map((e) => (e.type === 'text' ? `text:${e.text}` : e.type)),
    ['started', 'text:Hello, world', 'tool', 'toolResult', 'text:Second message', 'turnEnd'],
  );
  assert.deepEqual(events[3], { type: 'toolResult', id: 't1', isError: true, output: 'no such file' });
});

test('text still streaming when the process dies is flushed at exit (no turnEnd without a result)', () => {
  const events = run([init, delta('partial '), delta('answer')], { code: 3, signal: null });
  assert.deepEqual(meaningful(events), [
    { type: 'started', backendSessionId: 'sid-1', model: 'auto' },
    { type: 'text', text: 'partial answer' },
  ]);
});

test('no result and a non-zero exit: nothing owed (PerTurnRun reports the crash)', () => {
  assert.deepEqual(
    run([init], { code: 1, signal: null }).filter((e) => e.type === 'turnEnd'),
    [],
  );
  assert.deepEqual(
    run([init], { code: null, signal: 'SIGKILL' }).filter((e) => e.type === 'turnEnd'),
    [],
  );
});

test('error events are warnings (not malformed); unknown types are activity', () => {
  const events = run([
    init,
    line({ type: 'error', severity: 'warning', message: 'Loop detected, stopping execution' }),
    line({ type: 'telemetry', x: 1 }),
    success,
  ]);
  assert.deepEqual(
    events.filter((e) => e.type === 'warning'),
    [{ type: 'warning', message: 'Gemini CLI warning: Loop detected, stopping execution' }],
  );
  assert.equal(events[2]?.type, 'activity');
});

test('garbage lines → warning malformed, never a throw, the turn still ends', () => {
  const events = run([
    init,
    'not json at all',
    '[1,2]',
    '{"no":"type"}',
    line({ type: 'tool_use', tool_name: 42 }),
    line({ type: 'result', status: 'maybe' }),
    success,
  ]);
  const warnings = events.filter((e) => e.type === 'warning');
  assert.equal(warnings.length, 5);
  for (const w of warnings) assert.equal((w as { malformed?: boolean }).malformed, true);
  assert.match((warnings[3] as { message: string }).message, /bad "tool_use"/);
  assert.equal(events.at(-1)?.type, 'turnEnd');
});

test('a garbage line between two chunks does not split the message', () => {
  const texts = run([init, delta('a'), 'garbage', delta('b'), success]).filter((e) => e.type === 'text');
  assert.deepEqual(texts, [{ type: 'text', text: 'ab' }]);
});

test('ask_user tool_use also yields a question', () => {
  const events = run([
    init,
    line({
      type: 'tool_use',
      tool_name: 'ask_user',
      tool_id: 'q1',
      parameters: { questions: [{ question: 'Which file?', header: 'File' }] },
    }),
  ]);
  assert.deepEqual(
    events.filter((e) => e.type === 'question'),
    [{ type: 'question', text: 'Which file?' }],
  );
});

test('result status error: api_error from the real CLI shape (type unknown, exit 144), status from the message', () => {
  const message = '[API Error: {"error":{"code":400,"message":"mock bad request","status":"INVALID_ARGUMENT"}}]';
  const events = run(
    [
      init,
      line({
        type: 'result',
        status: 'error',
        error: { type: 'unknown', message },
        stats: { input_tokens: 0, output_tokens: 0 },
      }),
    ],
    {
      code: 144,
      signal: null,
    },
  );
  assert.deepEqual(events.at(-1), {
    type: 'turnEnd',
    outcome: { ok: false, reason: 'api_error', message, apiErrorStatus: 400 },
    costUsd: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
  });
});

const errorResult = (type: string | undefined, message: string): GeminiResult => ({
  type: 'result',
  status: 'error',
  ...(type ? { error: { type, message } } : {}),
});
const exitCode = (code: number): ExitInfo => ({ code, signal: null });

test('outcome: status error with type api_error and exit 1 → api_error', () => {
  assert.deepEqual(geminiOutcome(errorResult('api_error', 'quota'), exitCode(1)), {
    ok: false,
    reason: 'api_error',
    message: 'quota',
  });
});

test('outcome: other error types → execution_error with the message', () => {
  assert.deepEqual(geminiOutcome(errorResult('FatalToolExecutionError', 'tool blew up'), exitCode(54)), {
    ok: false,
    reason: 'execution_error',
    message: 'tool blew up',
  });
});

test('outcome: success + exit 0 → ok; success + signal → ok (the answer was complete)', () => {
  assert.deepEqual(geminiOutcome({ type: 'result', status: 'success' }, ok), { ok: true });
  assert.deepEqual(geminiOutcome({ type: 'result', status: 'success' }, { code: null, signal: 'SIGTERM' }), {
    ok: true,
  });
});

test('outcome: success + exit 144 → api_error with the HTTP status recovered from the code', () => {
  const outcome = geminiOutcome({ type: 'result', status: 'success' }, exitCode(144));
  assert.deepEqual(outcome, {
    ok: false,
    reason: 'api_error',
    message: 'Gemini CLI exited with code 144 after reporting success',
    apiErrorStatus: 400,
  });
});

test('outcome: exit 53 → max_turns; exit 41 → execution_error with an auth hint; exit 130 → interrupted', () => {
  const turnLimit = geminiOutcome(errorResult('FatalTurnLimitedError', 'Reached max session turns'), exitCode(53));
  assert.deepEqual(turnLimit, { ok: false, reason: 'max_turns', message: 'Reached max session turns' });
  assert.equal(geminiOutcome({ type: 'result', status: 'success' }, exitCode(53)).ok, false);
  const auth = geminiOutcome(errorResult('FatalAuthenticationError', 'Invalid auth method selected.'), exitCode(41));
  assert.equal(auth.ok, false);
  if (!auth.ok) {
    assert.equal(auth.reason, 'execution_error');
    assert.match(auth.message, /^Invalid auth method selected\. \(.*GEMINI_API_KEY.*gemini-api-key/);
  }
  assert.equal(
    (geminiOutcome(errorResult('FatalCancellationError', 'Operation cancelled.'), exitCode(130)) as { reason: string })
      .reason,
    'interrupted',
  );
});

test('outcome: status error without an error object takes the last error event message (invalid stream)', () => {
  const events = run([
    init,
    line({ type: 'error', severity: 'error', message: 'Invalid stream: empty response' }),
    line({ type: 'result', status: 'error' }),
  ]);
  assert.deepEqual((events.at(-1) as { outcome: unknown }).outcome, {
    ok: false,
    reason: 'execution_error',
    message: 'Invalid stream: empty response',
  });
});

test('parseGeminiLine keeps unknown types and rejects bad known ones', () => {
  assert.deepEqual(parseGeminiLine('{"type":"future_thing"}'), {
    ok: true,
    line: { kind: 'unknown', type: 'future_thing' },
  });
  assert.equal(parseGeminiLine('{"type":"init"}').ok, false);
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createGeminiHarness } from '../../src/coding/gemini/gemini-harness.ts';
import type { RunSpec } from '../../src/coding/harness.ts';
import type { FakeInvocation } from './harness-run.ts';
import {
  assertApiErrorTurn,
  collect,
  endRun,
  interruptTurn,
  ofType,
  readInvocations,
  runOneTurn,
  runTwoTurns,
} from './harness-run.ts';
import { perTurnFakeCases } from './per-turn-fake-cases.ts';
import { tempDir } from './temp-dir.ts';

const FAKE = join(dirname(fileURLToPath(import.meta.url)), 'fake-gemini.mjs');
const dir = tempDir('sb-fake-gemini-');
after(() => dir.remove());

let counter = 0;

/** A harness on the fake with its own FAKE_AGENT_LOG and HOME. */
function setup(configEnv: Record<string, string> = {}) {
  counter += 1;
  const log = join(dir.path, `invocations-${counter}.jsonl`);
  const home = join(dir.path, `home-${counter}`);
  const harness = createGeminiHarness({
    config: { executable: FAKE, env: { FAKE_AGENT_LOG: log, HOME: home, ...configEnv }, approvalMode: 'yolo' },
    killGraceMs: 500,
  });
  const invocations = (): FakeInvocation[] => readInvocations(log);
  return { harness, invocations, home };
}

function spec(prompt: string, extra: Partial<RunSpec> = {}): RunSpec {
  return { sessionId: `sb-${counter}`, prompt, workdir: dir.path, permissionMode: 'bypassPermissions', ...extra };
}

perTurnFakeCases({
  fake: FAKE,
  version: '0.61.0-fake',
  sigtermExitCode: 0,
  harness: (env) => setup(env).harness,
  missingHarness: () =>
    createGeminiHarness({
      config: { executable: join(dir.path, 'nope'), env: {}, approvalMode: 'yolo' },
      killGraceMs: 500,
    }),
  spec,
});

test('two turns via send(): the second invocation resumes the first session id', async () => {
  const { harness, invocations } = setup();
  const run = harness.start(spec('first'));
  const c = collect(run);
  const id = await runTwoTurns(run, c, 'second');
  assert.deepEqual(
    ofType(c.events, 'text').map((e) => e.text),
    ['FAKE GEMINI REPLY to: first', 'FAKE GEMINI REPLY to: second'],
  );
  const [one, two] = invocations();
  assert.deepEqual(one?.argv.slice(-2), ['--session-id', id]);
  assert.deepEqual(two?.argv.slice(-2), ['--resume', id]);
  assert.equal(one?.env.GEMINI_CLI_NO_RELAUNCH, 'true');
  assert.deepEqual(c.events.at(-1), { type: 'exited', code: 0 });
  assert.deepEqual(ofType(c.events, 'turnEnd')[0], {
    type: 'turnEnd',
    outcome: { ok: true },
    costUsd: 0,
    usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 },
  });
});

test('delta chunks come out as one coalesced text; tool calls are paired', async () => {
  const { harness } = setup();
  const run = harness.start(spec('go [[tool]] [[stream:3]]'));
  const c = collect(run);
  await runOneTurn(run, c);
  const texts = ofType(c.events, 'text');
  assert.deepEqual(
    texts.map((t) => t.text),
    ['block 1 of 3\nblock 2 of 3\nblock 3 of 3\ntool said: hello-from-tool'],
  );
  const [tool] = ofType(c.events, 'tool');
  const [result] = ofType(c.events, 'toolResult');
  assert.equal(tool?.name, 'run_shell_command');
  assert.deepEqual(result, { type: 'toolResult', id: tool?.id, isError: false, output: 'hello-from-tool' });
  const types = c.events.filter((e) => e.type !== 'activity').map((e) => e.type);
  assert.deepEqual(types, ['started', 'tool', 'toolResult', 'text', 'turnEnd', 'exited']);
});

test('[[question]]: ask_user is reported as a question, its denial as an error toolResult', async () => {
  const { harness } = setup();
  const c = collect(harness.start(spec('[[question]]')));
  await c.waitFor((e) => e.type === 'turnEnd');
  assert.deepEqual(ofType(c.events, 'question'), [{ type: 'question', text: 'Which file should I change?' }]);
  assert.equal(ofType(c.events, 'toolResult')[0]?.isError, true);
  assert.equal(ofType(c.events, 'text').at(-1)?.text, 'Which file should I change?');
});

test('[[error]]: the real API-error shape → api_error 400, the run exits with 144', async () => {
  const { harness } = setup();
  const c = collect(harness.start(spec('[[error]]')));
  await c.done;
  assertApiErrorTurn(c.events, 400, /fake bad request/);
  assert.deepEqual(c.events.at(-1), { type: 'exited', code: 144 });
});

test('[[exit144]]: a success result followed by exit 144 is a failed turn', async () => {
  const { harness } = setup();
  const c = collect(harness.start(spec('hi [[exit144]]')));
  await c.done;
  assert.equal(ofType(c.events, 'text').length, 1);
  const [end] = ofType(c.events, 'turnEnd');
  assert.deepEqual(end?.outcome, {
    ok: false,
    reason: 'api_error',
    message: 'Gemini CLI exited with code 144 after reporting success',
    apiErrorStatus: 400,
  });
  assert.deepEqual(c.events.at(-1), { type: 'exited', code: 144 });
});

test('interrupt during [[sleep:5000]]: turnEnd interrupted, then the queued send runs on the same session', async () => {
  const { harness, invocations } = setup();
  const run = harness.start(spec('slow [[sleep:5000]]'));
  const c = collect(run);
  const started = await c.waitFor((e) => e.type === 'started');
  run.send('after');
  await interruptTurn(run, c);
  const second = await c.waitFor((e) => e.type === 'turnEnd', 2);
  assert.deepEqual((second as { outcome: unknown }).outcome, { ok: true });
  assert.equal(ofType(c.events, 'text').at(-1)?.text, 'FAKE GEMINI REPLY to: after');
  assert.deepEqual(invocations()[1]?.argv.slice(-2), [
    '--resume',
    (started as { backendSessionId: string }).backendSessionId,
  ]);
  await endRun(run, c);
});

test('argv: model, plan → approval-mode default, system prompt in the first prompt, resumeBackendId → --resume', async () => {
  const { harness, invocations } = setup();
  const c = collect(
    harness.start(spec('task', { model: 'gemini-fake-pro', permissionMode: 'plan', systemPrompt: 'Be brief.' })),
  );
  await c.waitFor((e) => e.type === 'turnEnd');
  const argv = invocations()[0]?.argv ?? [];
  assert.equal(argv[argv.indexOf('--approval-mode') + 1], 'default');
  assert.deepEqual(argv.slice(-2), ['-m', 'gemini-fake-pro']);
  assert.ok(argv.includes('--prompt=<system_instructions>\nBe brief.\n</system_instructions>\n\ntask'));
  assert.equal(ofType(c.events, 'started')[0]?.model, 'gemini-fake-pro');

  const resumed = collect(harness.start(spec('again', { resumeBackendId: 'known-id', systemPrompt: 'Be brief.' })));
  await resumed.waitFor((e) => e.type === 'turnEnd');
  const argv2 = invocations()[1]?.argv ?? [];
  assert.deepEqual(argv2.slice(argv2.indexOf('--resume'), argv2.indexOf('--resume') + 2), ['--resume', 'known-id']);
  assert.ok(argv2.includes('--prompt=again'));
  assert.equal(ofType(resumed.events, 'started')[0]?.backendSessionId, 'known-id');
});

test('GOOGLE_GEMINI_BASE_URL in the env: the auth type is written to the run HOME settings first', async () => {
  const { harness, home } = setup({ GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9', GEMINI_API_KEY: 'x' });
  const c = collect(harness.start(spec('hi')));
  await c.waitFor((e) => e.type === 'turnEnd');
  assert.deepEqual(JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')), {
    security: { auth: { selectedType: 'gemini-api-key' } },
  });
});

test('[[replay:gemini-run2]]: a real capture through the harness', async () => {
  const { harness } = setup();
  const run = harness.start(spec('[[replay:gemini-run2]]'));
  const c = collect(run);
  await runOneTurn(run, c);
  assert.deepEqual(
    c.events.filter((e) => e.type !== 'activity').map((e) => e.type),
    ['started', 'tool', 'toolResult', 'text', 'turnEnd', 'exited'],
  );
  assert.equal(ofType(c.events, 'started')[0]?.backendSessionId, '2a16e5f6-f400-416a-93cd-bf8a3d894600');
});

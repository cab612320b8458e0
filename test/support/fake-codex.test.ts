import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CodexHarnessOptions } from '../../src/coding/codex/codex-harness.ts';
import { createCodexHarness } from '../../src/coding/codex/codex-harness.ts';
import type { RunSpec } from '../../src/coding/harness.ts';
import type { FakeInvocation } from './harness-run.ts';
import {
  assertApiErrorTurn,
  collect,
  endRun,
  interruptTurn,
  meaningful,
  ofType,
  readInvocations,
  runOneTurn,
  runTwoTurns,
} from './harness-run.ts';
import { perTurnFakeCases } from './per-turn-fake-cases.ts';
import { tempDir } from './temp-dir.ts';

const FAKE = join(dirname(fileURLToPath(import.meta.url)), 'fake-codex.mjs');
const dir = tempDir('sb-fake-codex-');
after(() => dir.remove());

let counter = 0;

/** A harness on the fake with its own FAKE_AGENT_LOG and CODEX_HOME. */
function setup(configEnv: Record<string, string> = {}, config: Partial<CodexHarnessOptions['config']> = {}) {
  counter += 1;
  const log = join(dir.path, `invocations-${counter}.jsonl`);
  const home = join(dir.path, `codex-home-${counter}`);
  const harness = createCodexHarness({
    config: { executable: FAKE, env: { FAKE_AGENT_LOG: log, CODEX_HOME: home, ...configEnv }, config: {}, ...config },
    killGraceMs: 500,
  });
  const invocations = (): FakeInvocation[] => readInvocations(log);
  return { harness, invocations, home };
}

function spec(prompt: string, extra: Partial<RunSpec> = {}): RunSpec {
  return { sessionId: `sb-${counter}`, prompt, workdir: dir.path, permissionMode: 'bypassPermissions', ...extra };
}

const turnUsage = { inputTokens: 100, outputTokens: 10, cachedInputTokens: 20 };

perTurnFakeCases({
  fake: FAKE,
  version: 'codex-cli 0.169.0-fake',
  sigtermExitCode: null,
  harness: (env) => setup(env).harness,
  missingHarness: () =>
    createCodexHarness({ config: { executable: join(dir.path, 'nope'), env: {}, config: {} }, killGraceMs: 500 }),
  spec,
});

test('two turns via send(): the second resumes the thread; cumulative usage comes out per turn', async () => {
  const { harness, invocations } = setup();
  const run = harness.start(spec('first'));
  const c = collect(run);
  const id = await runTwoTurns(run, c, 'second');
  assert.deepEqual(
    ofType(c.events, 'text').map((e) => e.text),
    ['FAKE CODEX REPLY to: first', 'FAKE CODEX REPLY to: second'],
  );
  assert.deepEqual(ofType(c.events, 'turnEnd'), [
    { type: 'turnEnd', outcome: { ok: true }, costUsd: 0, usage: turnUsage },
    { type: 'turnEnd', outcome: { ok: true }, costUsd: 0, usage: turnUsage },
  ]);
  const [one, two] = invocations();
  assert.deepEqual(one?.argv, [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '-C',
    dir.path,
    '--dangerously-bypass-approvals-and-sandbox',
    '--',
    'first',
  ]);
  assert.deepEqual(two?.argv.slice(-4), ['resume', id, '--', 'second']);
  assert.equal(one?.env.OPENAI_BASE_URL, undefined);
  assert.deepEqual(c.events.at(-1), { type: 'exited', code: 0 });
});

test('[[tool]] [[stream:3]]: tool/toolResult paired by item id, one text per agent_message', async () => {
  const { harness } = setup();
  const run = harness.start(spec('go [[tool]] [[stream:3]]'));
  const c = collect(run);
  await runOneTurn(run, c);
  assert.deepEqual(
    ofType(c.events, 'text').map((t) => t.text),
    ['block 1 of 3', 'block 2 of 3', 'block 3 of 3', 'tool said: hello-from-tool'],
  );
  const [tool] = ofType(c.events, 'tool');
  assert.deepEqual(tool, {
    type: 'tool',
    id: 'item_0',
    name: 'shell',
    input: { command: "/bin/bash -lc 'echo hello-from-tool'" },
  });
  assert.deepEqual(ofType(c.events, 'toolResult'), [
    { type: 'toolResult', id: 'item_0', isError: false, output: 'hello-from-tool\n' },
  ]);
  const types = c.events.filter((e) => e.type !== 'activity').map((e) => e.type);
  assert.deepEqual(types, ['started', 'tool', 'toolResult', 'text', 'text', 'text', 'text', 'turnEnd', 'exited']);
  assert.deepEqual(
    ofType(c.events, 'turnEnd')[0]?.usage,
    { inputTokens: 200, outputTokens: 20, cachedInputTokens: 40 },
    'two model requests',
  );
});

test('[[question]]: request_user_input → a question event, then the question as text', async () => {
  const { harness } = setup();
  const c = collect(harness.start(spec('[[question]]')));
  await c.waitFor((e) => e.type === 'turnEnd');
  assert.deepEqual(ofType(c.events, 'question'), [{ type: 'question', text: 'Which file should I change?' }]);
  assert.equal(ofType(c.events, 'text').at(-1)?.text, 'Which file should I change?');
});

test('[[error]] and [[budget]]: the real HTTP-400 shape → a warning, then api_error 400; the run exits with 1', async () => {
  for (const prompt of ['[[error]]', '[[budget]]']) {
    const { harness } = setup();
    const c = collect(harness.start(spec(prompt)));
    await c.done;
    assertApiErrorTurn(c.events, 400, /fake bad request/);
    assert.equal(ofType(c.events, 'warning').length, 1);
    assert.deepEqual(c.events.at(-1), { type: 'exited', code: 1 });
  }
});

test('interrupt during [[sleep:5000]]: turnEnd interrupted, then the queued send resumes the same thread', async () => {
  const { harness, invocations } = setup();
  const run = harness.start(spec('slow [[sleep:5000]]'));
  const c = collect(run);
  const started = (await c.waitFor((e) => e.type === 'started')) as { backendSessionId: string };
  run.send('after');
  await interruptTurn(run, c);
  const second = (await c.waitFor((e) => e.type === 'turnEnd', 2)) as { outcome: unknown; usage: unknown };
  assert.deepEqual(second.outcome, { ok: true });
  assert.deepEqual(second.usage, turnUsage);
  assert.equal(ofType(c.events, 'text').at(-1)?.text, 'FAKE CODEX REPLY to: after');
  assert.deepEqual(invocations()[1]?.argv.slice(-4), ['resume', started.backendSessionId, '--', 'after']);
  await endRun(run, c);
});

test('argv: model, plan → read-only, provider and extra -c overrides, system prompt on the first turn only', async () => {
  const provider = { id: 'mock', baseUrl: 'http://127.0.0.1:9/v1', wireApi: 'responses' as const, envKey: 'MOCK_KEY' };
  const { harness, invocations } = setup({}, { provider, config: { 'features.plugins': false } });
  const run = harness.start(spec('-task', { model: 'gpt-fake', permissionMode: 'plan', systemPrompt: 'Be brief.' }));
  const c = collect(run);
  await runTwoTurns(run, c, 'next');
  const [first, second] = invocations().map((i) => i.argv);
  assert.deepEqual(first, [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '-C',
    dir.path,
    '-m',
    'gpt-fake',
    '-s',
    'read-only',
    '-c',
    'model_provider="mock"',
    '-c',
    'model_providers.mock.name="mock"',
    '-c',
    'model_providers.mock.base_url="http://127.0.0.1:9/v1"',
    '-c',
    'model_providers.mock.wire_api="responses"',
    '-c',
    'model_providers.mock.env_key="MOCK_KEY"',
    '-c',
    'features.plugins=false',
    '-c',
    'developer_instructions="Be brief."',
    '--',
    '-task',
  ]);
  assert.equal(
    second?.some((a) => a.startsWith('developer_instructions')),
    false,
  );
  assert.equal(ofType(c.events, 'started')[0]?.model, 'gpt-fake');
  assert.match(ofType(c.events, 'warning')[0]?.message ?? '', /Model metadata for `gpt-fake` not found/);
});

test('resumeBackendId: resume <id> from the first turn; usage unknown on that turn, a delta on the next', async () => {
  const { harness, invocations } = setup();
  const first = harness.start(spec('earlier', { resumeBackendId: 'known-id' }));
  const earlier = collect(first);
  await earlier.waitFor((e) => e.type === 'turnEnd');
  first.end();
  await earlier.done;
  const run = harness.start(spec('again', { resumeBackendId: 'known-id' }));
  const c = collect(run);
  await runTwoTurns(run, c, 'more');
  assert.deepEqual(invocations()[1]?.argv.slice(-4), ['resume', 'known-id', '--', 'again']);
  assert.deepEqual(
    ofType(c.events, 'started').map((s) => s.backendSessionId),
    ['known-id', 'known-id'],
  );
  assert.deepEqual(
    ofType(c.events, 'turnEnd').map((e) => e.usage),
    [undefined, turnUsage],
  );
});

test('a missing workdir or an invalid -c key ends the run with a clear error', async () => {
  const { harness } = setup();
  const missing = collect(harness.start(spec('hi', { workdir: join(dir.path, 'nope') })));
  await missing.done;
  assert.match((missing.events.at(-1) as { error?: string }).error ?? '', /workdir .*nope does not exist/);
  const bad = setup({}, { config: { 'a=b': 1 } });
  const c = collect(bad.harness.start(spec('hi')));
  await c.done;
  assert.match((c.events.at(-1) as { error?: string }).error ?? '', /invalid key "a=b"/);
});

test('[[replay:codex-run2]]: a real capture through the harness', async () => {
  const { harness } = setup();
  const run = harness.start(spec('[[replay:codex-run2]]'));
  const c = collect(run);
  await runOneTurn(run, c);
  assert.deepEqual(
    meaningful(c.events).map((e) => e.type),
    ['started', 'tool', 'toolResult', 'text', 'turnEnd', 'exited'],
  );
  assert.equal(ofType(c.events, 'started')[0]?.backendSessionId, '01a2033c-599b-7cc2-9674-b7dfcf22d721');
});

test('the fake refuses a piped stdin (the real CLI would append it to the prompt) and unknown options', () => {
  const piped = spawnSync(process.execPath, [FAKE, 'exec', '--json', '--', 'hi'], { input: 'extra', encoding: 'utf8' });
  assert.equal(piped.status, 2);
  assert.match(piped.stderr, /stdin is a pipe/);
  const unknown = spawnSync(process.execPath, [FAKE, 'exec', '--json', '--frobnicate', '--', 'hi'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unexpected argument '--frobnicate'/);
});

// Contract: the real Gemini CLI (node_modules/@google/gemini-cli/bundle/gemini.js) driven through createGeminiHarness
// against the local mock Gemini API. Offline: HOME is a temp dir whose settings turn off usage statistics (otherwise the
// CLI looks up play.googleapis.com), telemetry and update checks; TMPDIR keeps the CLI's error reports in the temp dir.
// The auth type is left out of the settings on purpose: the harness must add it (GOOGLE_GEMINI_BASE_URL workaround).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { findPackageFile } from '../../src/coding/executables.ts';
import { createGeminiHarness } from '../../src/coding/gemini/gemini-harness.ts';
import type { Harness, Run, RunSpec } from '../../src/coding/harness.ts';
import {
  assertApiErrorTurn,
  collect as collectEvents,
  interruptTurn,
  meaningful,
  ofType,
  resumeAfterInterrupt,
  runOneTurn,
  runTwoTurns,
} from '../support/harness-run.ts';
import type { GeminiBody, MockGemini } from '../support/mock-gemini.ts';
import { allTexts, geminiText, startMockGemini } from '../support/mock-gemini.ts';
import { tempDir } from '../support/temp-dir.ts';

const bundle = findPackageFile('@google/gemini-cli', 'bundle/gemini.js');
const skip = bundle ? false : '@google/gemini-cli is not installed';
const TIMEOUT = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let mock: MockGemini;
const dir = tempDir('sb-gemini-contract-');

before(async () => {
  mock = await startMockGemini();
});
after(async () => {
  await mock?.close();
  dir.remove();
});

let counter = 0;

/** A fresh HOME + workdir and a harness on the real CLI pointed at the mock. */
function setup(): { harness: Harness; home: string; workdir: string } {
  counter += 1;
  const home = join(dir.path, `home-${counter}`);
  const workdir = join(dir.path, `work-${counter}`);
  const tmp = join(dir.path, `tmp-${counter}`);
  for (const d of [join(home, '.gemini'), workdir, tmp]) mkdirSync(d, { recursive: true });
  const settings = {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  };
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings));
  const env = {
    HOME: home,
    GEMINI_CLI_HOME: home,
    TMPDIR: tmp,
    GOOGLE_GEMINI_BASE_URL: mock.url,
    GEMINI_API_KEY: 'x',
    GEMINI_TELEMETRY_ENABLED: 'false',
    GOOGLE_GENAI_USE_VERTEXAI: '',
    GOOGLE_GENAI_USE_GCA: '',
  };
  const harness = createGeminiHarness({ config: { env, approvalMode: 'yolo' }, killGraceMs: 2_000 });
  return { harness, home, workdir };
}

function spec(prompt: string, workdir: string, extra: Partial<RunSpec> = {}): RunSpec {
  return { sessionId: `sb-contract-${counter}`, prompt, workdir, permissionMode: 'bypassPermissions', ...extra };
}

/** Collects a run's events; the real CLI may take a while to answer. */
const collect = (run: Run) => collectEvents(run, 45_000);

test('one turn with a shell tool call: tool → toolResult → text → turnEnd ok', { skip, timeout: TIMEOUT }, async () => {
  const { harness, home, workdir } = setup();
  const t0 = Date.now();
  const run = harness.start(spec('please USE_TOOL', workdir));
  const c = collect(run);
  const turnMs = (await runOneTurn(run, c)) - t0;
  const events = meaningful(c.events);
  assert.deepEqual(
    events.map((e) => e.type),
    ['started', 'tool', 'toolResult', 'text', 'turnEnd', 'exited'],
    JSON.stringify(c.events),
  );
  const [started] = ofType(events, 'started');
  assert.match(started?.backendSessionId ?? '', UUID);
  const [tool] = ofType(events, 'tool');
  assert.equal(tool?.name, 'run_shell_command');
  assert.deepEqual(tool?.input, { command: 'echo hello-from-gemini-tool', description: 'echo' });
  const [result] = ofType(events, 'toolResult');
  assert.equal(result?.id, tool?.id);
  assert.equal(result?.isError, false);
  assert.match(result?.output ?? '', /hello-from-gemini-tool/);
  const texts = ofType(events, 'text');
  assert.equal(texts.length, 1, 'the delta chunks are coalesced');
  assert.match(texts[0]?.text ?? '', /^gemini tool said: .*hello-from-gemini-tool/s);
  const [end] = ofType(events, 'turnEnd');
  assert.deepEqual(end?.outcome, { ok: true });
  assert.ok((end?.usage?.inputTokens ?? 0) > 0);
  assert.deepEqual(events.at(-1), { type: 'exited', code: 0 });
  const settings = JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(
    settings.security,
    { auth: { selectedType: 'gemini-api-key' } },
    'the harness selected the auth type',
  );
  assert.deepEqual(settings.privacy, { usageStatisticsEnabled: false }, 'and kept the rest');
  console.log(`gemini contract: tool turn took ${turnMs} ms`);
});

test(
  'resume: a second turn (send) and a second run (resumeBackendId) continue the same session',
  { skip, timeout: TIMEOUT },
  async () => {
    const { harness, workdir } = setup();
    const t0 = Date.now();
    const run = harness.start(spec('remember the word PINEAPPLE', workdir));
    const id = await runTwoTurns(run, collect(run), 'second turn');
    const before = mock.contentRequests().length;

    const second = harness.start(spec('third turn', workdir, { resumeBackendId: id }));
    const again = collect(second);
    await again.waitFor((e) => e.type === 'turnEnd');
    second.end();
    await again.done;
    assert.equal(ofType(again.events, 'started')[0]?.backendSessionId, id);
    assert.deepEqual(ofType(again.events, 'turnEnd')[0]?.outcome, { ok: true });
    const seen = mock.contentRequests().slice(before);
    const texts = allTexts((seen.at(-1)?.body ?? {}) as GeminiBody).join('\n');
    for (const earlier of ['PINEAPPLE', 'second turn', 'MOCK GEMINI REPLY', 'third turn'])
      assert.ok(texts.includes(earlier), `history has ${earlier}`);
    console.log(`gemini contract: three turns over two runs took ${Date.now() - t0} ms`);
  },
);

test('API_ERROR: the turn fails with api_error 400 and the run exits', { skip, timeout: TIMEOUT }, async () => {
  const { harness, workdir } = setup();
  const c = collect(harness.start(spec('API_ERROR please', workdir)));
  await c.done;
  assertApiErrorTurn(c.events, 400, /mock bad request/);
  const exited = c.events.at(-1);
  assert.equal(exited?.type, 'exited');
  assert.equal((exited as { code: number | null }).code, 144);
});

test(
  'interrupt while the model is answering: turnEnd interrupted, then the next send resumes',
  { skip, timeout: TIMEOUT },
  async () => {
    const { harness, workdir } = setup();
    // Resolves once the slow answer is being given: the turn to interrupt is under way.
    const { promise: answering, resolve: answer } = Promise.withResolvers<void>();
    mock.setHandler((body) => {
      if (!allTexts(body).some((t) => t.includes('SLOW')) || allTexts(body).some((t) => t.includes('fast now')))
        return geminiText('MOCK GEMINI REPLY');
      answer();
      return geminiText('late', { delayMs: 20_000 });
    });
    try {
      const run = harness.start(spec('SLOW answer', workdir));
      const c = collect(run);
      await c.waitFor((e) => e.type === 'started');
      await answering;
      await interruptTurn(run, c);
      await resumeAfterInterrupt(run, c, 'fast now');
    } finally {
      mock.setHandler(undefined);
    }
  },
);

test('check(): the bundled CLI reports its version', { skip, timeout: TIMEOUT }, async () => {
  const { harness } = setup();
  const result = await harness.check();
  assert.equal(result.ok, true, result.problem);
  assert.match(result.version ?? '', /^\d+\.\d+\.\d+/);
});

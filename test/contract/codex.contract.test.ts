// Contract: the real Codex CLI (the native binary installed with @openai/codex) driven through createCodexHarness against
// the local mock Responses API, selected with the harness's `-c model_providers.…` overrides (never OPENAI_BASE_URL).
// Offline: HOME and CODEX_HOME are temp dirs per test; `features.plugins=false` stops the plugin marketplace sync
// (`git ls-remote https://github.com/openai/plugins.git`, api.github.com, chatgpt.com) and `analytics.enabled=false` the
// analytics upload (ab.chatgpt.com), both observed on a fresh CODEX_HOME. Every proxy variable points at a local recorder
// that refuses everything (NO_PROXY keeps the mock direct), and the last test checks that it saw no request.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { codexNativeBinary, createCodexHarness } from '../../src/coding/codex/codex-harness.ts';
import { findPackageFile } from '../../src/coding/executables.ts';
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
import type { MockResponses, ResponsesBody } from '../support/mock-openai-responses.ts';
import {
  allInputTexts,
  inputItems,
  itemTexts,
  lastUserText,
  responsesText,
  startMockResponses,
} from '../support/mock-openai-responses.ts';
import { tempDir } from '../support/temp-dir.ts';

const executable = codexNativeBinary() ?? findPackageFile('@openai/codex', 'bin/codex.js');
const skip = executable ? false : '@openai/codex (with its platform binary) is not installed';
const TIMEOUT = 60_000;

let mock: MockResponses;
const proxied: string[] = [];
const proxy = createServer((req, res) => {
  proxied.push(`${req.method} ${req.url}`);
  res.writeHead(403).end();
});
proxy.on('connect', (req, socket) => {
  proxied.push(`CONNECT ${req.url}`);
  socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
});
const dir = tempDir('sb-codex-contract-');

before(async () => {
  mock = await startMockResponses();
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  await mock?.close();
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  dir.remove();
});

let counter = 0;

/** A fresh HOME, CODEX_HOME and workdir, and a harness on the real CLI pointed at the mock. */
function setup(): { harness: Harness; workdir: string } {
  counter += 1;
  const home = join(dir.path, `home-${counter}`);
  const workdir = join(dir.path, `work-${counter}`);
  for (const d of [join(home, '.codex'), workdir]) mkdirSync(d, { recursive: true });
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const proxies = Object.fromEntries(
    ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY'].flatMap((k) => [
      [k, proxyUrl],
      [k.toLowerCase(), proxyUrl],
    ]),
  );
  const env = {
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    MOCK_KEY: 'x',
    ...proxies,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
  const harness = createCodexHarness({
    config: {
      ...(executable ? { executable } : {}),
      env,
      provider: { id: 'mock', baseUrl: `${mock.url}/v1`, envKey: 'MOCK_KEY', wireApi: 'responses' },
      config: { 'features.plugins': false, 'analytics.enabled': false, check_for_update_on_startup: false },
    },
    killGraceMs: 2_000,
  });
  return { harness, workdir };
}

function spec(prompt: string, workdir: string, extra: Partial<RunSpec> = {}): RunSpec {
  return {
    sessionId: `sb-contract-${counter}`,
    prompt,
    workdir,
    model: 'mock-model',
    permissionMode: 'bypassPermissions',
    ...extra,
  };
}

/** Collects a run's events; the real CLI may take a while to answer. */
const collect = (run: Run) => collectEvents(run, 45_000);
const bodyOf = (index: number): ResponsesBody => (mock.responseRequests().at(index)?.body ?? {}) as ResponsesBody;

test('one turn with a shell tool call: tool → toolResult → text → turnEnd ok', { skip, timeout: TIMEOUT }, async () => {
  const { harness, workdir } = setup();
  const before = mock.responseRequests().length;
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
  const [tool] = ofType(events, 'tool');
  assert.equal(tool?.name, 'shell');
  assert.match(String((tool?.input as { command?: unknown }).command), /echo hello-from-codex-tool/);
  const [result] = ofType(events, 'toolResult');
  assert.deepEqual([result?.id, result?.isError], [tool?.id, false]);
  assert.match(result?.output ?? '', /hello-from-codex-tool/, 'the command really ran');
  assert.match(ofType(events, 'text')[0]?.text ?? '', /^codex tool output was: .*hello-from-codex-tool/s);
  const [end] = ofType(events, 'turnEnd');
  assert.deepEqual(end?.outcome, { ok: true });
  assert.deepEqual(end?.usage, { inputTokens: 200, outputTokens: 20, cachedInputTokens: 0 }, 'two model requests');
  assert.deepEqual(events.at(-1), { type: 'exited', code: 0 });
  const requests = mock.responseRequests().slice(before);
  assert.equal(requests.length, 2);
  assert.ok(
    (bodyOf(-2).tools ?? []).some((t) => t.name === 'exec_command'),
    'Codex offers exec_command',
  );
  assert.ok(
    inputItems(bodyOf(-1)).some((i) => i.type === 'function_call_output'),
    'the tool output went back to the model',
  );
  console.log(`codex contract: tool turn took ${turnMs} ms`);
});

test(
  'resume: a second turn (send) and a second run (resumeBackendId) continue the same thread',
  { skip, timeout: TIMEOUT },
  async () => {
    const { harness, workdir } = setup();
    const t0 = Date.now();
    const run = harness.start(spec('remember the word PINEAPPLE', workdir, { systemPrompt: 'Answer like a pirate.' }));
    const c = collect(run);
    const id = await runTwoTurns(run, c, 'second turn', () => {
      const developer = inputItems(bodyOf(-1))
        .filter((i) => i.role === 'developer')
        .flatMap(itemTexts);
      assert.ok(developer.length >= 2 && developer[0]?.includes('Codex'), 'Codex keeps its own instructions first');
      assert.ok(
        developer.slice(1).includes('Answer like a pirate.'),
        'the system prompt is appended as developer instructions',
      );
    });
    const turn = { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 };
    assert.deepEqual(
      ofType(c.events, 'turnEnd').map((e) => e.usage),
      [turn, turn],
      'cumulative thread usage comes out per turn',
    );

    const second = harness.start(
      spec('third turn', workdir, { resumeBackendId: id, systemPrompt: 'Answer like a pirate.' }),
    );
    const again = collect(second);
    await again.waitFor((e) => e.type === 'turnEnd');
    second.end();
    await again.done;
    assert.equal(ofType(again.events, 'started')[0]?.backendSessionId, id);
    assert.deepEqual(ofType(again.events, 'turnEnd')[0]?.outcome, { ok: true });
    const texts = allInputTexts(bodyOf(-1));
    for (const earlier of ['PINEAPPLE', 'second turn', 'MOCK CODEX REPLY', 'third turn'])
      assert.ok(
        texts.some((t) => t.includes(earlier)),
        `history has ${earlier}`,
      );
    assert.equal(
      texts.filter((t) => t === 'Answer like a pirate.').length,
      1,
      'the system prompt is in the history once',
    );
    console.log(`codex contract: three turns over two runs took ${Date.now() - t0} ms`);
  },
);

test(
  'API_ERROR: an HTTP 400 fails the turn with api_error 400 and the run exits',
  { skip, timeout: TIMEOUT },
  async () => {
    const { harness, workdir } = setup();
    const c = collect(harness.start(spec('API_ERROR please', workdir)));
    await c.done;
    assertApiErrorTurn(c.events, 400, /mock bad request/);
    assert.ok(
      ofType(c.events, 'warning').some((w) => /mock bad request/.test(w.message)),
      'the `error` line before turn.failed is a warning',
    );
    assert.deepEqual(c.events.at(-1), { type: 'exited', code: 1 });
  },
);

test(
  'interrupt while the model is answering: turnEnd interrupted, then the next send resumes',
  { skip, timeout: TIMEOUT },
  async () => {
    const { harness, workdir } = setup();
    // Resolves once the slow answer is being given: the turn to interrupt is under way.
    const { promise: answering, resolve: answer } = Promise.withResolvers<void>();
    mock.setHandler((body) => {
      if (!lastUserText(body).includes('SLOW')) return responsesText('MOCK CODEX REPLY');
      answer();
      return responsesText('late', { delayMs: 20_000 });
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

test('check(): the installed CLI reports its version', { skip, timeout: TIMEOUT }, async () => {
  const { harness } = setup();
  const result = await harness.check();
  assert.equal(result.ok, true, result.problem);
  assert.match(result.version ?? '', /^codex-cli \d+\.\d+\.\d+/);
});

test(
  'no request reached a public host (every proxy variable pointed at a refusing recorder)',
  { skip, timeout: TIMEOUT },
  () => {
    assert.deepEqual(proxied, []);
    assert.ok(
      mock.requests.every((r) => !r.upgrade),
      'a custom provider is reached over plain HTTP',
    );
  },
);

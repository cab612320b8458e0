// Contract: the real Codex CLI driven through createCodexHarness in bypassPermissions (one `codex exec --json` per turn)
// against the local mock Responses API, offline (see codex-contract-env.ts); the last test checks that the refusing proxy
// saw no request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Run } from '../../src/coding/harness.ts';
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
import { allInputTexts, inputItems, itemTexts, lastUserText, responsesText } from '../support/mock-openai-responses.ts';
import { codexContractEnv, skip } from './codex-contract-env.ts';

const TIMEOUT = 60_000;
const { mock: theMock, proxied, setup, spec, bodyOf } = codexContractEnv('sb-codex-contract-');

/** Collects a run's events; the real CLI may take a while to answer. */
const collect = (run: Run) => collectEvents(run, 45_000);

test('one turn with a shell tool call: tool → toolResult → text → turnEnd ok', { skip, timeout: TIMEOUT }, async () => {
  const { harness, workdir } = setup();
  const before = theMock().responseRequests().length;
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
  const requests = theMock().responseRequests().slice(before);
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
    theMock().setHandler((body) => {
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
      theMock().setHandler(undefined);
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
      theMock().requests.every((r) => !r.upgrade),
      'a custom provider is reached over plain HTTP',
    );
  },
);

// Fallback across providers when there is no answer, with the real AI SDK providers against the mock model servers: a
// time-out (on the injected clock), connection refused, reset or cut mid-answer, a DNS failure and an empty stream move on
// to the next provider; a caller abort ends the call.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ModelMocks } from '../../test/support/inference-fixture.ts';
import {
  buildInference,
  closedPort,
  rejection,
  REQUEST,
  startModelMocks,
} from '../../test/support/inference-fixture.ts';
import { textReply } from '../../test/support/mock-anthropic.ts';
import { geminiText } from '../../test/support/mock-gemini.ts';
import { chatText } from '../../test/support/mock-openai-chat.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import { InferenceError } from './types.ts';

describe('inference fallback on time-outs and broken connections', () => {
  let m: ModelMocks;
  // Fresh mocks per test: a failing test leaves no queued reply behind for the next one.
  beforeEach(async () => {
    m = await startModelMocks();
  });
  afterEach(() => m.close());

  it('a time-out moves to the next provider (the time limit runs on the injected clock)', async () => {
    const clock = new ManualClock();
    const { inference, logged } = buildInference([m.chatProvider({ timeoutMs: 5_000 }), m.anthropicProvider()], {
      clock,
    });
    m.chat.enqueue(chatText('too late', { delayMs: 60_000 }));
    m.anthropic.enqueue(textReply('answered by anthropic'));
    const pending = inference.complete(REQUEST);
    await waitFor('the first provider to be called', () => m.chat.completionRequests().length === 1);
    clock.advance(4_999);
    assert.equal(m.anthropic.messageRequests().length, 0, 'no fallback before the time limit');
    clock.advance(1);
    const result = await pending;
    assert.equal(result.text, 'answered by anthropic');
    assert.equal(result.provider, 'anthropic');
    const [fallback] = logged(/^inference fallback/);
    assert.equal(fallback?.kind, 'timeout');
    assert.equal(fallback?.reason, 'timed out after 5000 ms');
    assert.equal(clock.pending, 0, 'the time limit of each attempt is cancelled');
  });

  it('streaming: a time-out mid-stream moves to the next provider', async () => {
    const clock = new ManualClock();
    const { inference } = buildInference([m.anthropicProvider({ stream: true, timeoutMs: 1_000 }), m.chatProvider()], {
      clock,
    });
    m.anthropic.enqueue(textReply('a slow answer that never ends', { chunkDelayMs: 60_000 }));
    m.chat.enqueue(chatText('answered by openai'));
    const pending = inference.complete(REQUEST);
    await waitFor('the first provider to be called', () => m.anthropic.messageRequests().length === 1);
    clock.advance(1_000);
    const result = await pending;
    assert.equal(result.text, 'answered by openai');
  });

  it('connection refused moves to the next provider', async () => {
    const port = await closedPort();
    const { inference, logged } = buildInference([
      m.chatProvider({ id: 'down', baseUrl: `http://127.0.0.1:${port}/v1` }),
      m.anthropicProvider(),
    ]);
    m.anthropic.enqueue(textReply('answered by anthropic'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'anthropic');
    const [fallback] = logged(/^inference fallback/);
    assert.equal(fallback?.from, 'down');
    assert.equal(fallback?.kind, 'connection');
    assert.match(String(fallback?.reason), /^connection error \(ECONNREFUSED\)/);
  });

  it('a connection reset (the server hangs up) moves to the next provider', async () => {
    const { inference, logged } = buildInference([m.chatProvider(), m.geminiProvider()]);
    m.chat.enqueue({ kind: 'hangup' });
    m.gemini.enqueue(geminiText('answered by gemini'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'google');
    assert.equal(logged(/^inference fallback/)[0]?.kind, 'connection');
  });

  for (const stream of [true, false]) {
    it(`the connection breaking mid-answer (${stream ? 'streaming' : 'non-streaming'}) moves to the next provider, dropping the partial answer`, async () => {
      const { inference, logged } = buildInference([m.chatProvider({ stream }), m.anthropicProvider()]);
      m.chat.enqueue(chatText('a partial answer that never finishes', { cut: true }));
      m.anthropic.enqueue(textReply('a whole answer'));
      const result = await inference.complete(REQUEST);
      assert.equal(result.text, 'a whole answer');
      assert.equal(result.provider, 'anthropic');
      const [fallback] = logged(/^inference fallback/);
      assert.ok(fallback);
      assert.equal(fallback.kind, 'connection');
      assert.match(String(fallback.reason), /^connection error \(UND_ERR_SOCKET\)/);
    });
  }

  it('streaming: a stream that ends without an answer (200, no events) moves to the next provider', async () => {
    const empty = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end();
      });
    });
    await new Promise<void>((resolve) => empty.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = empty.address() as AddressInfo;
      const { inference, logged } = buildInference([
        m.chatProvider({ id: 'empty', stream: true, baseUrl: `http://127.0.0.1:${port}/v1` }),
        m.anthropicProvider(),
      ]);
      m.anthropic.enqueue(textReply('a whole answer'));
      const result = await inference.complete(REQUEST);
      assert.equal(result.provider, 'anthropic');
      const [fallback] = logged(/^inference fallback/);
      assert.equal(fallback?.kind, 'stream');
      assert.equal(fallback?.reason, "the answer ended with finish reason 'interrupted'");
    } finally {
      empty.closeAllConnections();
      await new Promise<void>((resolve) => empty.close(() => resolve()));
    }
  });

  it('a DNS failure moves to the next provider', async () => {
    // What undici throws when the name does not resolve; no lookup leaves the machine.
    const fetchWithDns: typeof globalThis.fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === 'llm.invalid') {
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('getaddrinfo ENOTFOUND llm.invalid'), {
            code: 'ENOTFOUND',
            hostname: 'llm.invalid',
          }),
        });
      }
      return globalThis.fetch(input, init);
    };
    const { inference, logged } = buildInference(
      [m.chatProvider({ id: 'nxdomain', baseUrl: 'http://llm.invalid/v1' }), m.anthropicProvider()],
      { fetch: fetchWithDns },
    );
    m.anthropic.enqueue(textReply('answered by anthropic'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'anthropic');
    assert.match(String(logged(/^inference fallback/)[0]?.reason), /^connection error \(ENOTFOUND\)/);
  });

  it('a caller abort ends the call without falling back', async () => {
    const { inference } = buildInference([m.chatProvider(), m.anthropicProvider()]);
    m.chat.enqueue(chatText('slow', { delayMs: 60_000 }));
    const controller = new AbortController();
    const pending = rejection(inference.complete({ ...REQUEST, signal: controller.signal }));
    await waitFor('the first provider to be called', () => m.chat.completionRequests().length === 1);
    controller.abort();
    const error = await pending;
    assert.ok(error instanceof InferenceError);
    assert.equal(error.message, 'Inference aborted.');
    assert.deepEqual(error.attempts, ['openai: aborted by the caller']);
    assert.equal(m.anthropic.messageRequests().length, 0);
    const already = await rejection(inference.complete({ ...REQUEST, signal: controller.signal }));
    assert.ok(already instanceof InferenceError);
    assert.equal(m.chat.completionRequests().length, 1, 'an already aborted call sends nothing');
  });
});

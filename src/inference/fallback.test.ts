// Fallback across providers on HTTP answers, with the real AI SDK providers against the mock model servers: 429 and 5xx
// (529 included, also as a mid-stream error event) move on to the next provider and are logged; 400, 401, 403 and 404 end
// the call; every provider failing lists each attempt; no provider is NoProviderError; no API key reaches a log line.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ModelMocks } from '../../test/support/inference-fixture.ts';
import {
  buildInference,
  closedPort,
  OPENAI_KEY,
  rejection,
  REQUEST,
  startModelMocks,
} from '../../test/support/inference-fixture.ts';
import { errorReply, textReply } from '../../test/support/mock-anthropic.ts';
import { geminiError, geminiText } from '../../test/support/mock-gemini.ts';
import { chatError, chatText } from '../../test/support/mock-openai-chat.ts';
import { responsesError, responsesText } from '../../test/support/mock-openai-responses.ts';
import { inferenceSchema } from '../core/config-inference.ts';
import { silentLogger } from '../core/logger.ts';
import { createInference } from './inference.ts';
import { InferenceError, NoProviderError } from './types.ts';

describe('inference fallback on HTTP errors', () => {
  let m: ModelMocks;
  // Fresh mocks per test: a failing test leaves no queued reply behind for the next one.
  beforeEach(async () => {
    m = await startModelMocks();
  });
  afterEach(() => m.close());

  it('no provider configured: not available, NoProviderError', async () => {
    const inference = createInference(inferenceSchema.parse({}), silentLogger());
    assert.equal(inference.available, false);
    const error = await rejection(inference.complete(REQUEST));
    assert.ok(error instanceof NoProviderError);
    assert.equal(error.message, 'No inference provider available.');
  });

  it('429 with retry-after moves to the next provider at once, and the fallback is logged without secrets', async () => {
    const { inference, raw, logged } = buildInference([m.anthropicProvider(), m.chatProvider()]);
    m.anthropic.enqueue({
      kind: 'error',
      status: 429,
      errorType: 'rate_limit_error',
      message: 'Number of request tokens has exceeded your per-minute rate limit',
      headers: { 'retry-after': '30' },
    });
    m.chat.enqueue(chatText('answered by openai'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.text, 'answered by openai');
    assert.equal(result.provider, 'openai');
    assert.equal(result.model, 'gpt-mock');
    // One request each: the SDK did not retry the 429 itself (it would have waited the 30 s retry-after).
    assert.equal(m.anthropic.messageRequests().length, 1);
    assert.equal(m.chat.completionRequests().length, 1);

    const [fallback] = logged(/^inference fallback/);
    assert.ok(fallback, 'the fallback is logged');
    assert.equal(fallback.level, 40);
    assert.equal(fallback.msg, 'inference fallback: anthropic → openai');
    assert.equal(fallback.from, 'anthropic');
    assert.equal(fallback.to, 'openai');
    assert.equal(fallback.model, 'claude-mock-1');
    assert.equal(fallback.toModel, 'gpt-mock');
    assert.equal(fallback.status, 429);
    assert.equal(fallback.kind, 'http');
    assert.equal(fallback.sessionId, 'user:telegram:42');
    assert.equal(fallback.component, 'inference');
    assert.match(String(fallback.reason), /^HTTP 429 rate_limit_error: Number of request tokens/);
    const [answered] = logged(/^inference answered after fallback$/);
    assert.equal(answered?.provider, 'openai');
    assert.equal(answered?.failedProviders, 1);
    assert.doesNotMatch(raw(), /SECRET/);
  });

  for (const [status, type] of [
    [503, 'api_error'],
    [500, 'api_error'],
    [529, 'overloaded_error'],
  ] as const) {
    it(`${status} moves to the next provider`, async () => {
      const { inference, logged } = buildInference([m.anthropicProvider(), m.geminiProvider()]);
      m.anthropic.enqueue(errorReply(status, 'try later', type));
      m.gemini.enqueue(geminiText('answered by gemini'));
      const result = await inference.complete(REQUEST);
      assert.equal(result.text, 'answered by gemini');
      assert.equal(result.provider, 'google');
      assert.equal(logged(/^inference fallback: anthropic → google$/)[0]?.status, status);
    });
  }

  for (const stream of [false, true]) {
    it(`OpenAI Responses (${stream ? 'streaming' : 'non-streaming'}): 429 falls back, 400 does not`, async () => {
      const { inference, logged } = buildInference([m.responsesProvider({ stream }), m.chatProvider()]);
      m.responses.enqueue({
        kind: 'error',
        status: 429,
        message: 'Rate limit reached for gpt-mock-r',
        type: 'requests',
        code: 'rate_limit_exceeded',
        headers: { 'retry-after': '20' },
      });
      m.chat.enqueue(chatText('answered by chat'));
      const result = await inference.complete(REQUEST);
      assert.equal(result.provider, 'openai');
      assert.equal(m.responses.responseRequests().length, 1, 'the 429 is not retried on the same provider');
      assert.equal(
        logged(/^inference fallback: openai-responses → openai$/)[0]?.reason,
        'HTTP 429 requests: Rate limit reached for gpt-mock-r',
      );

      m.responses.enqueue(responsesError(400, "Invalid type for 'input[0].content'"));
      const error = await rejection(inference.complete(REQUEST));
      assert.ok(error instanceof InferenceError);
      assert.deepEqual(error.attempts, [
        "openai-responses: HTTP 400 invalid_request_error: Invalid type for 'input[0].content'",
      ]);
      assert.equal(m.chat.completionRequests().length, 1, 'no fallback after the 400');

      m.responses.enqueue(responsesText('answered by responses'));
      const ok = await inference.complete(REQUEST);
      assert.equal(ok.provider, 'openai-responses');
      assert.equal(ok.model, 'gpt-mock-r');
    });
  }

  it('streaming: an error event after part of the answer moves to the next provider', async () => {
    const { inference, logged } = buildInference([
      m.anthropicProvider({ stream: true }),
      m.chatProvider({ stream: true }),
    ]);
    m.anthropic.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'Half an ans' }],
      streamError: { type: 'overloaded_error', message: 'Overloaded' },
    });
    m.chat.enqueue(chatText('a whole answer'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.text, 'a whole answer', 'the partial answer is not returned');
    assert.equal(result.provider, 'openai');
    const [fallback] = logged(/^inference fallback/);
    assert.equal(fallback?.status, 529);
    assert.match(String(fallback?.reason), /overloaded_error: Overloaded/);
  });

  for (const [status, type] of [
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
  ] as const) {
    it(`${status} does not fall back: InferenceError naming the provider`, async () => {
      const { inference, logged } = buildInference([m.anthropicProvider(), m.chatProvider()]);
      m.anthropic.enqueue(errorReply(status, `mock ${type}`, type));
      const error = await rejection(inference.complete(REQUEST));
      assert.ok(error instanceof InferenceError);
      assert.deepEqual(error.attempts, [`anthropic: HTTP ${status} ${type}: mock ${type}`]);
      assert.equal(error.message, `Inference failed: anthropic: HTTP ${status} ${type}: mock ${type}`);
      assert.equal(m.chat.completionRequests().length, 0, 'the next provider is not called');
      assert.equal(logged(/^inference fallback/).length, 0);
      assert.equal(logged(/not falling back/)[0]?.status, status);
    });
  }

  it('an error message echoing the API key is scrubbed from the attempts and the logs', async () => {
    const { inference, raw } = buildInference([m.chatProvider()]);
    m.chat.enqueue(
      chatError(
        401,
        `Incorrect API key provided: ${OPENAI_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      ),
    );
    const error = await rejection(inference.complete(REQUEST));
    assert.ok(error instanceof InferenceError);
    assert.match(
      error.attempts[0] ?? '',
      /^openai: HTTP 401 invalid_request_error: Incorrect API key provided: \[redacted\]\./,
    );
    assert.doesNotMatch(error.message, /SECRET/);
    assert.doesNotMatch(raw(), /SECRET/);
  });

  it('every provider failing: InferenceError listing each attempt, logged as an error', async () => {
    const port = await closedPort();
    const { inference, logged } = buildInference([
      m.anthropicProvider(),
      m.chatProvider(),
      m.geminiProvider(),
      m.chatProvider({ id: 'local', baseUrl: `http://127.0.0.1:${port}/v1` }),
    ]);
    m.anthropic.enqueue(errorReply(529, 'Overloaded', 'overloaded_error'));
    m.chat.enqueue(chatError(429, 'Rate limit reached for gpt-mock'));
    m.gemini.enqueue(geminiError(503, 'The model is overloaded. Please try again later.'));
    const error = await rejection(inference.complete(REQUEST));
    assert.ok(error instanceof InferenceError);
    assert.equal(error.attempts.length, 4);
    assert.equal(error.attempts[0], 'anthropic: HTTP 529 overloaded_error: Overloaded');
    assert.equal(error.attempts[1], 'openai: HTTP 429 requests: Rate limit reached for gpt-mock');
    assert.equal(error.attempts[2], 'google: HTTP 503 UNAVAILABLE: The model is overloaded. Please try again later.');
    assert.match(error.attempts[3] ?? '', /^local: connection error \(ECONNREFUSED\)/);
    assert.equal(logged(/^inference fallback/).length, 3);
    const [final] = logged(/^inference failed on every provider$/);
    assert.equal(final?.level, 50);
    assert.deepEqual(final?.attempts, error.attempts);
  });

  it('retriesPerProvider hands retries to the SDK before moving on', async () => {
    const { inference, logged } = buildInference([m.anthropicProvider(), m.chatProvider()], {
      section: { retriesPerProvider: 1 },
    });
    m.anthropic.enqueue(
      { kind: 'error', status: 503, errorType: 'api_error', message: 'blip', headers: { 'retry-after-ms': '1' } },
      textReply('second try'),
    );
    const result = await inference.complete(REQUEST);
    assert.equal(result.text, 'second try');
    assert.equal(result.provider, 'anthropic');
    assert.equal(m.anthropic.messageRequests().length, 2);
    assert.equal(logged(/^inference fallback/).length, 0);
  });

  it('after the SDK retries are used up, the fallback still happens', async () => {
    const { inference, logged } = buildInference([m.anthropicProvider(), m.chatProvider()], {
      section: { retriesPerProvider: 1 },
    });
    const busy = {
      kind: 'error',
      status: 529,
      errorType: 'overloaded_error',
      message: 'Overloaded',
      headers: { 'retry-after-ms': '1' },
    } as const;
    m.anthropic.enqueue(busy, busy);
    m.chat.enqueue(chatText('answered by openai'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'openai');
    assert.equal(m.anthropic.messageRequests().length, 2);
    assert.equal(logged(/^inference fallback/)[0]?.status, 529);
  });
});

// Fallback across providers, with the real AI SDK providers against the mock model servers: which failures move on to
// the next provider (429, 5xx, time-out, connection refused/reset/DNS, an answer cut off mid-stream), which end the call
// (400, 401, 404, a caller abort), and what is logged.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import { inferenceSchema } from '../core/config-inference.ts';
import { silentLogger } from '../core/logger.ts';
import { captureLogger } from '../../test/support/log-capture.ts';
import type { LogLine } from '../../test/support/log-capture.ts';
import { errorReply, startMockAnthropic, textReply } from '../../test/support/mock-anthropic.ts';
import type { MockAnthropic } from '../../test/support/mock-anthropic.ts';
import { chatError, chatText, startMockOpenAIChat } from '../../test/support/mock-openai-chat.ts';
import type { MockOpenAIChat } from '../../test/support/mock-openai-chat.ts';
import { geminiError, geminiText, startMockGemini } from '../../test/support/mock-gemini.ts';
import type { MockGemini } from '../../test/support/mock-gemini.ts';
import { createInference } from './inference.ts';
import type { InferenceOptions } from './inference.ts';
import { InferenceError, NoProviderError } from './types.ts';
import type { InferenceRequest } from './types.ts';

const ANTHROPIC_KEY = 'sk-ant-SECRET-0001';
const OPENAI_KEY = 'sk-proj-SECRET-0002';
const GOOGLE_KEY = 'AIza-SECRET-0003';
const REQUEST: InferenceRequest = { system: 'sys', messages: [{ role: 'user', content: 'status?' }], tools: [], sessionId: 'user:telegram:42' };

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls until `predicate` holds (the mock saw a request); fails the test if it never does. */
async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return assert.fail('expected the call to fail');
}

describe('inference fallback', () => {
  let anthropic: MockAnthropic;
  let chat: MockOpenAIChat;
  let gemini: MockGemini;

  const anthropicProvider = (extra: Record<string, unknown> = {}) => ({ kind: 'anthropic', model: 'claude-mock-1', apiKey: ANTHROPIC_KEY, baseUrl: `${anthropic.url}/v1`, maxOutputTokens: 256, ...extra });
  const chatProvider = (extra: Record<string, unknown> = {}) => ({ kind: 'openai', api: 'chat', model: 'gpt-mock', apiKey: OPENAI_KEY, baseUrl: `${chat.url}/v1`, ...extra });
  const geminiProvider = (extra: Record<string, unknown> = {}) => ({ kind: 'google', model: 'gemini-mock', apiKey: GOOGLE_KEY, baseUrl: `${gemini.url}/v1beta`, ...extra });

  function build(providers: Record<string, unknown>[], options: InferenceOptions & { section?: Record<string, unknown> } = {}) {
    const capture = captureLogger();
    const { section, ...rest } = options;
    const inference = createInference(inferenceSchema.parse({ providers, ...section }), capture.logger, { env: {}, ...rest });
    const logged = (msg: RegExp): LogLine[] => capture.lines().filter((line) => typeof line.msg === 'string' && msg.test(line.msg));
    return { inference, capture, logged };
  }

  // Fresh mocks per test: a failing test leaves no queued reply behind for the next one.
  beforeEach(async () => {
    [anthropic, chat, gemini] = await Promise.all([startMockAnthropic(), startMockOpenAIChat(), startMockGemini()]);
  });
  afterEach(async () => {
    await Promise.all([anthropic.close(), chat.close(), gemini.close()]);
  });

  it('no provider configured: not available, NoProviderError', async () => {
    const inference = createInference(inferenceSchema.parse({}), silentLogger());
    assert.equal(inference.available, false);
    const error = await rejection(inference.complete(REQUEST));
    assert.ok(error instanceof NoProviderError);
    assert.equal(error.message, 'No inference provider available.');
  });

  it('429 with retry-after moves to the next provider at once, and the fallback is logged without secrets', async () => {
    const { inference, capture, logged } = build([anthropicProvider(), chatProvider()]);
    anthropic.enqueue({ kind: 'error', status: 429, errorType: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit', headers: { 'retry-after': '30' } });
    chat.enqueue(chatText('answered by openai'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.text, 'answered by openai');
    assert.equal(result.provider, 'openai');
    assert.equal(result.model, 'gpt-mock');
    // One request each: the SDK did not retry the 429 itself (it would have waited the 30 s retry-after).
    assert.equal(anthropic.messageRequests().length, 1);
    assert.equal(chat.completionRequests().length, 1);

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
    assert.doesNotMatch(capture.raw(), /SECRET/);
  });

  for (const [status, type] of [
    [503, 'api_error'],
    [500, 'api_error'],
    [529, 'overloaded_error'],
  ] as const) {
    it(`${status} moves to the next provider`, async () => {
      const { inference, logged } = build([anthropicProvider(), geminiProvider()]);
      anthropic.enqueue(errorReply(status, 'try later', type));
      gemini.enqueue(geminiText('answered by gemini'));
      const result = await inference.complete(REQUEST);
      assert.equal(result.text, 'answered by gemini');
      assert.equal(result.provider, 'google');
      assert.equal(logged(/^inference fallback: anthropic → google$/)[0]?.status, status);
    });
  }

  it('a time-out moves to the next provider (the time limit runs on the injected clock)', async () => {
    const clock = new ManualClock();
    const { inference, logged } = build([chatProvider({ timeoutMs: 5_000 }), anthropicProvider()], { clock });
    chat.enqueue(chatText('too late', { delayMs: 60_000 }));
    anthropic.enqueue(textReply('answered by anthropic'));
    const pending = inference.complete(REQUEST);
    await waitFor(() => chat.completionRequests().length === 1, 'the first provider to be called');
    clock.advance(4_999);
    assert.equal(anthropic.messageRequests().length, 0, 'no fallback before the time limit');
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
    const { inference } = build([anthropicProvider({ stream: true, timeoutMs: 1_000 }), chatProvider()], { clock });
    anthropic.enqueue(textReply('a slow answer that never ends', { chunkDelayMs: 60_000 }));
    chat.enqueue(chatText('answered by openai'));
    const pending = inference.complete(REQUEST);
    await waitFor(() => anthropic.messageRequests().length === 1, 'the first provider to be called');
    clock.advance(1_000);
    const result = await pending;
    assert.equal(result.text, 'answered by openai');
  });

  it('connection refused moves to the next provider', async () => {
    const port = await closedPort();
    const { inference, logged } = build([chatProvider({ id: 'down', baseUrl: `http://127.0.0.1:${port}/v1` }), anthropicProvider()]);
    anthropic.enqueue(textReply('answered by anthropic'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'anthropic');
    const [fallback] = logged(/^inference fallback/);
    assert.equal(fallback?.from, 'down');
    assert.equal(fallback?.kind, 'connection');
    assert.match(String(fallback?.reason), /^connection error \(ECONNREFUSED\)/);
  });

  it('a connection reset (the server hangs up) moves to the next provider', async () => {
    const { inference, logged } = build([chatProvider(), geminiProvider()]);
    chat.enqueue({ kind: 'hangup' });
    gemini.enqueue(geminiText('answered by gemini'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'google');
    assert.equal(logged(/^inference fallback/)[0]?.kind, 'connection');
  });

  for (const stream of [true, false]) {
    it(`the connection breaking mid-answer (${stream ? 'streaming' : 'non-streaming'}) moves to the next provider, dropping the partial answer`, async () => {
      const { inference, logged } = build([chatProvider({ stream }), anthropicProvider()]);
      chat.enqueue(chatText('a partial answer that never finishes', { cut: true }));
      anthropic.enqueue(textReply('a whole answer'));
      const result = await inference.complete(REQUEST);
      assert.equal(result.text, 'a whole answer');
      assert.equal(result.provider, 'anthropic');
      const [fallback] = logged(/^inference fallback/);
      assert.ok(fallback);
      assert.equal(fallback.kind, 'connection');
      assert.match(String(fallback.reason), /^connection error \(UND_ERR_SOCKET\)/);
    });
  }

  it('a DNS failure moves to the next provider', async () => {
    // What undici throws when the name does not resolve; no lookup leaves the machine.
    const fetchWithDns: typeof globalThis.fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === 'llm.invalid') {
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND llm.invalid'), { code: 'ENOTFOUND', hostname: 'llm.invalid' }) });
      }
      return globalThis.fetch(input, init);
    };
    const { inference, logged } = build([chatProvider({ id: 'nxdomain', baseUrl: 'http://llm.invalid/v1' }), anthropicProvider()], { fetch: fetchWithDns });
    anthropic.enqueue(textReply('answered by anthropic'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'anthropic');
    assert.match(String(logged(/^inference fallback/)[0]?.reason), /^connection error \(ENOTFOUND\)/);
  });

  it('streaming: an error event after part of the answer moves to the next provider', async () => {
    const { inference, logged } = build([anthropicProvider({ stream: true }), chatProvider({ stream: true })]);
    anthropic.enqueue({ kind: 'message', content: [{ type: 'text', text: 'Half an ans' }], streamError: { type: 'overloaded_error', message: 'Overloaded' } });
    chat.enqueue(chatText('a whole answer'));
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
      const { inference, logged } = build([anthropicProvider(), chatProvider()]);
      anthropic.enqueue(errorReply(status, `mock ${type}`, type));
      const error = await rejection(inference.complete(REQUEST));
      assert.ok(error instanceof InferenceError);
      assert.deepEqual(error.attempts, [`anthropic: HTTP ${status} ${type}: mock ${type}`]);
      assert.equal(error.message, `Inference failed: anthropic: HTTP ${status} ${type}: mock ${type}`);
      assert.equal(chat.completionRequests().length, 0, 'the next provider is not called');
      assert.equal(logged(/^inference fallback/).length, 0);
      assert.equal(logged(/not falling back/)[0]?.status, status);
    });
  }

  it('an error message echoing the API key is scrubbed from the attempts and the logs', async () => {
    const { inference, capture } = build([chatProvider()]);
    chat.enqueue(chatError(401, `Incorrect API key provided: ${OPENAI_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`));
    const error = await rejection(inference.complete(REQUEST));
    assert.ok(error instanceof InferenceError);
    assert.match(error.attempts[0] ?? '', /^openai: HTTP 401 invalid_request_error: Incorrect API key provided: \[redacted\]\./);
    assert.doesNotMatch(error.message, /SECRET/);
    assert.doesNotMatch(capture.raw(), /SECRET/);
  });

  it('every provider failing: InferenceError listing each attempt, logged as an error', async () => {
    const port = await closedPort();
    const { inference, logged } = build([anthropicProvider(), chatProvider(), geminiProvider(), chatProvider({ id: 'local', baseUrl: `http://127.0.0.1:${port}/v1` })]);
    anthropic.enqueue(errorReply(529, 'Overloaded', 'overloaded_error'));
    chat.enqueue(chatError(429, 'Rate limit reached for gpt-mock'));
    gemini.enqueue(geminiError(503, 'The model is overloaded. Please try again later.'));
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

  it('a caller abort ends the call without falling back', async () => {
    const { inference } = build([chatProvider(), anthropicProvider()]);
    chat.enqueue(chatText('slow', { delayMs: 60_000 }));
    const controller = new AbortController();
    const pending = rejection(inference.complete({ ...REQUEST, signal: controller.signal }));
    await waitFor(() => chat.completionRequests().length === 1, 'the first provider to be called');
    controller.abort();
    const error = await pending;
    assert.ok(error instanceof InferenceError);
    assert.equal(error.message, 'Inference aborted.');
    assert.deepEqual(error.attempts, ['openai: aborted by the caller']);
    assert.equal(anthropic.messageRequests().length, 0);
    const already = await rejection(inference.complete({ ...REQUEST, signal: controller.signal }));
    assert.ok(already instanceof InferenceError);
    assert.equal(chat.completionRequests().length, 1, 'an already aborted call sends nothing');
  });

  it('retriesPerProvider hands retries to the SDK before moving on', async () => {
    const { inference, logged } = build([anthropicProvider(), chatProvider()], { section: { retriesPerProvider: 1 } });
    anthropic.enqueue({ kind: 'error', status: 503, errorType: 'api_error', message: 'blip', headers: { 'retry-after-ms': '1' } }, textReply('second try'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.text, 'second try');
    assert.equal(result.provider, 'anthropic');
    assert.equal(anthropic.messageRequests().length, 2);
    assert.equal(logged(/^inference fallback/).length, 0);
  });

  it('after the SDK retries are used up, the fallback still happens', async () => {
    const { inference, logged } = build([anthropicProvider(), chatProvider()], { section: { retriesPerProvider: 1 } });
    const busy = { kind: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded', headers: { 'retry-after-ms': '1' } } as const;
    anthropic.enqueue(busy, busy);
    chat.enqueue(chatText('answered by openai'));
    const result = await inference.complete(REQUEST);
    assert.equal(result.provider, 'openai');
    assert.equal(anthropic.messageRequests().length, 2);
    assert.equal(logged(/^inference fallback/)[0]?.status, 529);
  });
});

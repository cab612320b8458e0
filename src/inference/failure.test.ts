import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APICallError, RetryError, StreamProviderError } from 'ai';
import { classifyFailure, isRetryableStatus, scrubSecrets } from './failure.ts';

function httpError(statusCode: number, body: unknown, message = 'mock'): APICallError {
  return new APICallError({
    message,
    url: 'http://127.0.0.1/v1/messages',
    requestBodyValues: {},
    statusCode,
    responseBody: JSON.stringify(body),
    data: body,
  });
}

/** What undici throws when a connection fails: TypeError('fetch failed') with the socket error as cause. */
function fetchFailed(code: string, message: string): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) });
}

describe('isRetryableStatus', () => {
  it('retries 408, 429 and 5xx only', () => {
    for (const status of [408, 429, 500, 502, 503, 504, 529])
      assert.equal(isRetryableStatus(status), true, String(status));
    for (const status of [400, 401, 403, 404, 409, 413, 422])
      assert.equal(isRetryableStatus(status), false, String(status));
  });
});

describe('classifyFailure', () => {
  it('falls back on 429 and 529, naming the status and the provider error type', () => {
    const rate = classifyFailure(
      httpError(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, 'slow down'),
    );
    assert.deepEqual(rate, {
      retryable: true,
      kind: 'http',
      status: 429,
      reason: 'HTTP 429 rate_limit_error: slow down',
    });
    const overloaded = classifyFailure(
      httpError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'Overloaded'),
    );
    assert.equal(overloaded.retryable, true);
    assert.equal(overloaded.reason, 'HTTP 529 overloaded_error: Overloaded');
  });

  it('reads Google status names and OpenAI error types', () => {
    const google = classifyFailure(
      httpError(503, { error: { code: 503, message: 'busy', status: 'UNAVAILABLE' } }, 'busy'),
    );
    assert.equal(google.reason, 'HTTP 503 UNAVAILABLE: busy');
    const openai = classifyFailure(
      httpError(400, { error: { message: 'bad', type: 'invalid_request_error', param: null, code: null } }, 'bad'),
    );
    assert.deepEqual(openai, {
      retryable: false,
      kind: 'http',
      status: 400,
      reason: 'HTTP 400 invalid_request_error: bad',
    });
  });

  it('does not fall back on 400, 401, 403, 404', () => {
    for (const status of [400, 401, 403, 404])
      assert.equal(classifyFailure(httpError(status, {})).retryable, false, String(status));
  });

  it("looks through the SDK's RetryError to the last error", () => {
    const error = new RetryError({
      message: 'Failed after 3 attempts',
      reason: 'maxRetriesExceeded',
      errors: [httpError(500, {}), httpError(503, {}, 'last')],
    });
    const failure = classifyFailure(error);
    assert.equal(failure.status, 503);
    assert.equal(failure.retryable, true);
    const notRetryable = new RetryError({
      message: 'Failed after 2 attempts',
      reason: 'errorNotRetryable',
      errors: [httpError(503, {}), httpError(400, {})],
    });
    assert.equal(classifyFailure(notRetryable).retryable, false);
  });

  it('treats refused, reset and DNS failures as connection errors, through the cause chain', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET']) {
      const failure = classifyFailure(fetchFailed(code, `${code} boom`));
      assert.equal(failure.retryable, true, code);
      assert.equal(failure.kind, 'connection', code);
      assert.match(failure.reason, new RegExp(`connection error \\(${code}\\)`));
    }
    const wrapped = new APICallError({
      message: 'Cannot connect to API: getaddrinfo ENOTFOUND llm.invalid',
      url: 'x',
      requestBodyValues: {},
      cause: fetchFailed('ENOTFOUND', 'getaddrinfo ENOTFOUND llm.invalid'),
    });
    assert.match(classifyFailure(wrapped).reason, /connection error \(ENOTFOUND\): Cannot connect to API/);
    const aggregate = new TypeError('fetch failed', {
      cause: new AggregateError(
        [Object.assign(new Error('connect ECONNREFUSED ::1:9'), { code: 'ECONNREFUSED' })],
        'all failed',
      ),
    });
    assert.equal(classifyFailure(aggregate).kind, 'connection');
  });

  it('reads a broken 200 answer by its socket error, not its status', () => {
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const error = new APICallError({
      message: 'Failed to process successful response',
      url: 'x',
      requestBodyValues: {},
      statusCode: 200,
      cause: new TypeError('terminated', { cause: socket }),
      isRetryable: true,
    });
    assert.deepEqual(classifyFailure(error), {
      retryable: true,
      kind: 'connection',
      reason: 'connection error (UND_ERR_SOCKET): Failed to process successful response',
    });
  });

  it('uses the status a provider stream error stands for', () => {
    const failure = classifyFailure(
      new StreamProviderError({ message: 'Overloaded', type: 'overloaded_error', statusCode: 529, isRetryable: true }),
    );
    assert.deepEqual(failure, {
      retryable: true,
      kind: 'http',
      status: 529,
      reason: 'HTTP 529 overloaded_error: Overloaded',
    });
    const noStatus = classifyFailure(new StreamProviderError({ message: 'stream broke', isRetryable: true }));
    assert.equal(noStatus.retryable, true);
    assert.equal(noStatus.kind, 'stream');
  });

  it('ends the call on anything else', () => {
    const failure = classifyFailure(new TypeError('Cannot read properties of undefined'));
    assert.deepEqual(failure, {
      retryable: false,
      kind: 'other',
      reason: 'TypeError: Cannot read properties of undefined',
    });
    assert.equal(classifyFailure('a string').retryable, false);
  });

  it('keeps the reason on one line and without the API key', () => {
    const failure = classifyFailure(httpError(401, {}, 'Incorrect API key provided:\n sk-test-SECRET-1234'), [
      'sk-test-SECRET-1234',
    ]);
    assert.equal(failure.reason, 'HTTP 401: Incorrect API key provided: [redacted]');
  });
});

describe('scrubSecrets', () => {
  it('replaces every occurrence and ignores empty or tiny secrets', () => {
    assert.equal(scrubSecrets('a KEY123 b KEY123', ['KEY123', undefined, '', 'ab']), 'a [redacted] b [redacted]');
  });
});

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, jsonSchema, streamText, tool } from 'ai';
import type { MockOpenAIChat } from './mock-openai-chat.ts';
import { chatError, chatText, chatToolCall, startMockOpenAIChat } from './mock-openai-chat.ts';

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** The `data:` payloads of an SSE body. */
function dataLines(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

describe('mock OpenAI Chat Completions server', () => {
  let mock: MockOpenAIChat;
  beforeEach(async () => {
    mock = await startMockOpenAIChat();
  });
  afterEach(() => mock.close());

  it('answers one chat.completion object and records the request', async () => {
    mock.enqueue(chatToolCall('lookup', { q: 'x' }, 'call_1'));
    const response = await post(`${mock.url}/v1/chat/completions`, {
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.model, 'gpt-x');
    assert.deepEqual((body.choices as unknown[])[0], {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        annotations: [],
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    assert.deepEqual(
      mock.completionRequests().map((r) => r.path),
      ['/v1/chat/completions'],
    );
  });

  it('streams role, content and tool-call deltas, a finish chunk, a usage chunk when asked, then [DONE]', async () => {
    mock.enqueue({
      kind: 'completion',
      content: 'Hello',
      toolCalls: [{ name: 'lookup', arguments: { q: 'x' }, id: 'call_9' }],
    });
    const response = await post(`${mock.url}/chat/completions`, {
      model: 'gpt-x',
      stream: true,
      stream_options: { include_usage: true },
      messages: [],
    });
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const data = dataLines(await response.text());
    assert.equal(data.at(-1), '[DONE]');
    const chunks = data.slice(0, -1).map(
      (d) =>
        JSON.parse(d) as {
          object: string;
          choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
          usage: unknown;
        },
    );
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
    assert.deepEqual(chunks[0]?.choices[0]?.delta, { role: 'assistant', content: '', refusal: null });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, 'Hello');
    const calls = chunks.flatMap(
      (c) =>
        (c.choices[0]?.delta.tool_calls as
          { id?: string; function: { name?: string; arguments?: string } }[] | undefined) ?? [],
    );
    assert.equal(calls[0]?.id, 'call_9');
    assert.equal(calls[0]?.function.name, 'lookup');
    assert.equal(calls.map((c) => c.function.arguments ?? '').join(''), '{"q":"x"}');
    assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'tool_calls');
    assert.deepEqual(chunks.at(-1)?.choices, []);
    assert.equal((chunks.at(-1)?.usage as { total_tokens: number }).total_tokens, 25);
  });

  it("answers errors in OpenAI's shape, a 429 with retry-after", async () => {
    mock.enqueue(
      chatError(429, 'Rate limit reached'),
      chatError(400, "Invalid 'messages'"),
      chatError(503, 'overloaded'),
    );
    const rate = await post(`${mock.url}/v1/chat/completions`, { messages: [] });
    assert.equal(rate.status, 429);
    assert.equal(rate.headers.get('retry-after'), '20');
    assert.deepEqual(await rate.json(), {
      error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    });
    const bad = await post(`${mock.url}/v1/chat/completions`, { messages: [] });
    assert.deepEqual(await bad.json(), {
      error: { message: "Invalid 'messages'", type: 'invalid_request_error', param: null, code: null },
    });
    const busy = await post(`${mock.url}/v1/chat/completions`, { messages: [] });
    assert.equal(busy.status, 503);
    assert.equal(((await busy.json()) as { error: { type: string } }).error.type, 'server_error');
  });

  it('hangs up without an answer', async () => {
    mock.enqueue({ kind: 'hangup' });
    await assert.rejects(post(`${mock.url}/v1/chat/completions`, { messages: [] }), /fetch failed/);
  });

  it('lists models and answers unknown routes with 404', async () => {
    const models = (await (await fetch(`${mock.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.equal(models.data[0]?.id, 'gpt-mock');
    const missing = await post(`${mock.url}/v1/completions`, {});
    assert.equal(missing.status, 404);
  });

  it('follows the default script: USE_TOOL, API_ERROR, an echo', async () => {
    const model = createOpenAICompatible({ name: 'mock', baseURL: `${mock.url}/v1` }).chatModel('m');
    const echo = await generateText({ model, prompt: 'ping', maxRetries: 0 });
    assert.equal(echo.text, 'MOCK CHAT REPLY to: ping');
    const tools = {
      lookup: tool({
        description: 'look up',
        inputSchema: jsonSchema({ type: 'object', properties: { text: { type: 'string' } } }),
      }),
    };
    const call = await generateText({ model, prompt: 'USE_TOOL please', tools, maxRetries: 0 });
    assert.deepEqual(
      call.toolCalls.map((c) => [c.toolName, c.input]),
      [['lookup', { text: 'hello' }]],
    );
    await assert.rejects(
      generateText({ model, prompt: 'API_ERROR', maxRetries: 0 }),
      (error: unknown) => APICallError.isInstance(error) && error.statusCode === 400,
    );
  });

  it("streams through the AI SDK's streamText as deltas, with usage (openai.chat)", async () => {
    mock.enqueue(chatText('streamed answer', { usage: { promptTokens: 3, completionTokens: 2 } }));
    const model = createOpenAI({ apiKey: 'k', baseURL: `${mock.url}/v1` }).chat('gpt-x');
    const result = streamText({ model, prompt: 'go', maxRetries: 0 });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    assert.deepEqual(deltas, ['streamed', ' answer']);
    assert.equal((await result.usage).inputTokens, 3);
    assert.equal(await result.finishReason, 'stop');
    const body = mock.completionRequests().at(-1)?.body as { stream?: boolean; stream_options?: unknown };
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
  });
});

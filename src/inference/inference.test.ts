// The real AI SDK providers against the mock model servers on 127.0.0.1: a text answer and a tool call round trip
// (assistant tool call → tool result → final text) for every wire API, streaming and not.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { MessagesBody, MockAnthropic } from '../../test/support/mock-anthropic.ts';
import { startMockAnthropic, textReply, toolUseReply } from '../../test/support/mock-anthropic.ts';
import type { GeminiBody, MockGemini } from '../../test/support/mock-gemini.ts';
import { geminiFunctionCall, geminiText, startMockGemini } from '../../test/support/mock-gemini.ts';
import type { ChatBody, MockOpenAIChat } from '../../test/support/mock-openai-chat.ts';
import { chatText, chatToolCall, startMockOpenAIChat } from '../../test/support/mock-openai-chat.ts';
import type { MockResponses, ResponsesBody } from '../../test/support/mock-openai-responses.ts';
import { responsesFunctionCall, responsesText, startMockResponses } from '../../test/support/mock-openai-responses.ts';
import type { ProviderConfig } from '../core/config-inference.ts';
import { inferenceSchema } from '../core/config-inference.ts';
import { silentLogger } from '../core/logger.ts';
import { createInference } from './inference.ts';
import type { ChatMessage, Inference, ToolSpec } from './types.ts';

const TOOLS: ToolSpec[] = [
  {
    name: 'session_kill',
    description: 'Kill a coding session by name.',
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    },
  },
];
const SYSTEM = 'You are the switchboard orchestrator.';

function inference(provider: Record<string, unknown>): Inference {
  return createInference(inferenceSchema.parse({ providers: [provider] }), silentLogger(), { env: {} });
}

/** What a mock saw of the last request, reduced to what every API carries. */
interface Seen {
  model: string | undefined;
  stream: boolean;
  system: string;
  toolNames: string[];
  /** The tool result sent back, as the wire put it. */
  toolResult?: { id: string; content: string; isError?: boolean };
}

interface Case {
  name: string;
  provider: (stream: boolean) => Record<string, unknown> & Partial<ProviderConfig>;
  scriptToolCall: (id: string) => void;
  scriptText: (text: string) => void;
  lastRequest: () => Seen;
  /** The mock's default-script answer to a tool result with this content. */
  answerTo: (content: string) => RegExp;
  /** Whether the wire carries the tool result's error flag (an Anthropic is_error, a Google `error` response, OpenAI's `{"error"}`). */
  errorFlag: boolean;
}

function anthropicSeen(body: MessagesBody): Seen {
  const system = Array.isArray(body.system)
    ? (body.system as { text: string }[]).map((b) => b.text).join('')
    : String(body.system ?? '');
  const last = body.messages?.at(-1);
  const block = Array.isArray(last?.content)
    ? (last.content as { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }[]).find(
        (b) => b.type === 'tool_result',
      )
    : undefined;
  const content = typeof block?.content === 'string' ? block.content : JSON.stringify(block?.content);
  return {
    model: body.model,
    stream: body.stream === true,
    system,
    toolNames: (body.tools ?? []).map((t) => t.name),
    ...(block ? { toolResult: { id: String(block.tool_use_id), content, isError: block.is_error === true } } : {}),
  };
}

/** OpenAI's Chat Completions and Responses APIs have no error flag: the SDK sends an error result as `{"error": …}`. */
function unwrapError(content: string): { content: string; isError: boolean } {
  try {
    const parsed = JSON.parse(content) as unknown;
    if (parsed && typeof parsed === 'object' && 'error' in parsed)
      return { content: String(parsed.error), isError: true };
  } catch {
    // plain text
  }
  return { content, isError: false };
}

function chatSeen(body: ChatBody): Seen {
  const messages = body.messages ?? [];
  const tool = messages.filter((m) => m.role === 'tool').at(-1);
  return {
    model: body.model,
    stream: body.stream === true,
    system: messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => String(m.content))
      .join(''),
    toolNames: (body.tools ?? []).map((t) => String(t.function?.name)),
    ...(tool ? { toolResult: { id: String(tool.tool_call_id), ...unwrapError(String(tool.content)) } } : {}),
  };
}

function responsesSeen(body: ResponsesBody): Seen {
  const items = Array.isArray(body.input) ? body.input : [];
  const output = items.filter((i) => i.type === 'function_call_output').at(-1);
  const system = items
    .filter((i) => i.role === 'system' || i.role === 'developer')
    .map((i) => (typeof i.content === 'string' ? i.content : JSON.stringify(i.content)));
  return {
    model: body.model,
    stream: body.stream === true,
    system: [body.instructions ?? '', ...system].join(''),
    toolNames: (body.tools ?? []).map((t) => String(t.name)),
    ...(output ? { toolResult: { id: String(output.call_id), ...unwrapError(String(output.output)) } } : {}),
  };
}

function geminiSeen(body: GeminiBody, path: string): Seen {
  const parts = body.contents?.at(-1)?.parts ?? [];
  const response = parts.find((p) => p.functionResponse !== undefined)?.functionResponse as
    { id?: string; name?: string; response?: { content?: unknown; error?: unknown } } | undefined;
  const system = ((body.systemInstruction as { parts?: { text?: string }[] } | undefined)?.parts ?? [])
    .map((p) => p.text ?? '')
    .join('');
  const declarations = ((body.tools ?? []) as { functionDeclarations?: { name: string }[] }[]).flatMap(
    (t) => t.functionDeclarations ?? [],
  );
  return {
    model: /models\/([^:]+)/.exec(path)?.[1],
    stream: path.endsWith(':streamGenerateContent'),
    system,
    toolNames: declarations.map((d) => d.name),
    ...(response
      ? {
          toolResult: {
            id: String(response.id),
            content: String(response.response?.content ?? response.response?.error),
            isError: response.response?.error !== undefined,
          },
        }
      : {}),
  };
}

describe('inference against the mock model servers', () => {
  let anthropic: MockAnthropic;
  let chat: MockOpenAIChat;
  let gemini: MockGemini;
  let responses: MockResponses;

  // Fresh mocks per test: a failing test leaves no queued reply behind for the next one.
  beforeEach(async () => {
    [anthropic, chat, gemini, responses] = await Promise.all([
      startMockAnthropic(),
      startMockOpenAIChat(),
      startMockGemini(),
      startMockResponses(),
    ]);
  });
  afterEach(async () => {
    await Promise.all([anthropic.close(), chat.close(), gemini.close(), responses.close()]);
  });

  const cases: Case[] = [
    {
      name: 'Anthropic Messages',
      provider: (stream) => ({
        kind: 'anthropic',
        model: 'claude-mock-1',
        apiKey: 'sk-ant-test',
        baseUrl: `${anthropic.url}/v1`,
        maxOutputTokens: 1024,
        stream,
      }),
      scriptToolCall: (id) => anthropic.enqueue(toolUseReply('session_kill', { name: 'fix-tests' }, id)),
      scriptText: (text) => anthropic.enqueue(textReply(text, { usage: { inputTokens: 31, outputTokens: 9 } })),
      lastRequest: () => anthropicSeen(anthropic.messageRequests().at(-1)?.body as MessagesBody),
      answerTo: (content) => new RegExp(`^tool said: ${content}$`),
      errorFlag: true,
    },
    {
      name: 'OpenAI Responses',
      provider: (stream) => ({
        kind: 'openai',
        model: 'gpt-mock',
        apiKey: 'sk-test',
        baseUrl: `${responses.url}/v1`,
        stream,
      }),
      scriptToolCall: (id) => responses.enqueue(responsesFunctionCall('session_kill', { name: 'fix-tests' }, id)),
      scriptText: (text) => responses.enqueue(responsesText(text, { usage: { inputTokens: 31, outputTokens: 9 } })),
      lastRequest: () => responsesSeen(responses.responseRequests().at(-1)?.body as ResponsesBody),
      answerTo: (content) => new RegExp(`^codex tool output was: .*${content}`),
      errorFlag: true,
    },
    {
      name: 'OpenAI Chat Completions (openai.chat)',
      provider: (stream) => ({
        kind: 'openai',
        api: 'chat',
        model: 'gpt-mock',
        apiKey: 'sk-test',
        baseUrl: `${chat.url}/v1`,
        stream,
      }),
      scriptToolCall: (id) => chat.enqueue(chatToolCall('session_kill', { name: 'fix-tests' }, id)),
      scriptText: (text) => chat.enqueue(chatText(text, { usage: { promptTokens: 31, completionTokens: 9 } })),
      lastRequest: () => chatSeen(chat.completionRequests().at(-1)?.body as ChatBody),
      answerTo: (content) => new RegExp(`^chat tool said: .*${content}`),
      errorFlag: true,
    },
    {
      name: 'OpenAI-compatible Chat Completions (a local server)',
      provider: (stream) => ({
        id: 'local',
        kind: 'openai-compatible',
        model: 'llama-mock',
        baseUrl: `${chat.url}/v1`,
        stream,
      }),
      scriptToolCall: (id) => chat.enqueue(chatToolCall('session_kill', { name: 'fix-tests' }, id)),
      scriptText: (text) => chat.enqueue(chatText(text, { usage: { promptTokens: 31, completionTokens: 9 } })),
      lastRequest: () => chatSeen(chat.completionRequests().at(-1)?.body as ChatBody),
      answerTo: (content) => new RegExp(`^chat tool said: ${content}$`),
      errorFlag: false,
    },
    {
      name: 'Google generateContent',
      provider: (stream) => ({
        kind: 'google',
        model: 'gemini-mock',
        apiKey: 'g-test',
        baseUrl: `${gemini.url}/v1beta`,
        stream,
      }),
      scriptToolCall: () => gemini.enqueue(geminiFunctionCall('session_kill', { name: 'fix-tests' })),
      scriptText: (text) => gemini.enqueue(geminiText(text, { usage: { promptTokens: 31, candidatesTokens: 9 } })),
      lastRequest: () => {
        const request = gemini.contentRequests().at(-1);
        return geminiSeen(request?.body as GeminiBody, request?.path ?? '');
      },
      answerTo: (content) => new RegExp(`^gemini tool said: .*${content}`),
      errorFlag: true,
    },
  ];

  const caseNamed = (name: string): Case => {
    const found = cases.find((c) => c.name === name);
    assert.ok(found, name);
    return found;
  };

  for (const c of cases) {
    for (const stream of [false, true]) {
      const mode = stream ? 'streaming' : 'non-streaming';

      it(`${c.name}, ${mode}: answers text with usage, naming provider and model`, async () => {
        const provider = c.provider(stream);
        const inf = inference(provider);
        assert.equal(inf.available, true);
        c.scriptText(`hello from ${c.name}`);
        const result = await inf.complete({
          system: SYSTEM,
          messages: [{ role: 'user', content: 'hi' }],
          tools: TOOLS,
        });
        assert.equal(result.text, `hello from ${c.name}`);
        assert.deepEqual(result.toolCalls, []);
        assert.equal(result.finishReason, 'stop');
        assert.equal(result.provider, provider.id ?? provider.kind);
        assert.ok(result.model.length > 0);
        assert.deepEqual(result.usage, { inputTokens: 31, outputTokens: 9 });
        const seen = c.lastRequest();
        assert.equal(seen.stream, stream);
        assert.equal(seen.model, provider.model);
        assert.equal(seen.system, SYSTEM);
        assert.deepEqual(seen.toolNames, ['session_kill']);
      });

      it(`${c.name}, ${mode}: a tool call round trip`, async () => {
        const inf = inference(c.provider(stream));
        c.scriptToolCall('call_kill_1');
        const messages: ChatMessage[] = [{ role: 'user', content: 'kill fix-tests' }];
        const first = await inf.complete({ system: SYSTEM, messages, tools: TOOLS, sessionId: 'user:1' });
        assert.equal(first.finishReason, 'tool-calls');
        assert.equal(first.toolCalls.length, 1);
        const call = first.toolCalls[0];
        assert.ok(call);
        assert.equal(call.name, 'session_kill');
        assert.deepEqual(call.input, { name: 'fix-tests' });
        assert.ok(call.id.length > 0);

        for (const isError of [false, true]) {
          const content = isError ? 'no session named fix-tests' : 'killed fix-tests';
          const second = await inf.complete({
            system: SYSTEM,
            messages: [
              ...messages,
              { role: 'assistant', content: '', toolCalls: [call] },
              { role: 'tool', toolCallId: call.id, toolName: call.name, content, isError },
            ],
            tools: TOOLS,
          });
          assert.match(second.text, c.answerTo(content));
          assert.equal(second.finishReason, 'stop');
          assert.deepEqual(second.toolCalls, []);
          const seen = c.lastRequest().toolResult;
          assert.ok(seen, 'the tool result reached the wire');
          assert.equal(seen.id, call.id);
          assert.match(seen.content, new RegExp(content));
          if (c.errorFlag) assert.equal(seen.isError, isError);
        }
      });
    }
  }

  it('passes several tool calls of one answer through, in order', async () => {
    const inf = inference(caseNamed('Anthropic Messages').provider(false));
    anthropic.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: 'Killing both.' },
        { type: 'tool_use', id: 't_a', name: 'session_kill', input: { name: 'a' } },
        { type: 'tool_use', id: 't_b', name: 'session_kill', input: { name: 'b' } },
      ],
    });
    const result = await inf.complete({
      system: SYSTEM,
      messages: [{ role: 'user', content: 'kill a and b' }],
      tools: TOOLS,
    });
    assert.equal(result.text, 'Killing both.');
    assert.deepEqual(result.toolCalls, [
      { id: 't_a', name: 'session_kill', input: { name: 'a' } },
      { id: 't_b', name: 'session_kill', input: { name: 'b' } },
    ]);
  });

  it('hands back a call to a tool it was not given, for the engine to answer with an error', async () => {
    const inf = inference(caseNamed('OpenAI Chat Completions (openai.chat)').provider(false));
    chat.enqueue(chatToolCall('rm_rf', { path: '/' }, 'call_bad'));
    const result = await inf.complete({ system: SYSTEM, messages: [{ role: 'user', content: 'x' }], tools: TOOLS });
    assert.deepEqual(result.toolCalls, [{ id: 'call_bad', name: 'rm_rf', input: { path: '/' } }]);
  });

  it('sends no tools when none are given, and no system prompt when it is empty', async () => {
    const inf = inference(caseNamed('Anthropic Messages').provider(false));
    anthropic.enqueue(textReply('plain'));
    const result = await inf.complete({ system: '', messages: [{ role: 'user', content: 'x' }], tools: [] });
    assert.equal(result.text, 'plain');
    const body = anthropic.messageRequests().at(-1)?.body as MessagesBody;
    assert.equal(body.tools, undefined);
    assert.equal(body.system, undefined);
  });
});

// A scripted mock of the OpenAI Chat Completions API on 127.0.0.1, for any Chat Completions client (the AI SDK's
// `openai.chat(...)` and `@ai-sdk/openai-compatible`: baseURL `${url}/v1`; Ollama, vLLM and LM Studio speak the same).
// Routes (the `/v1` prefix is optional):
//   POST /v1/chat/completions   stream:true → SSE `data: {chat.completion.chunk}` lines: a role chunk, content deltas,
//                               tool_calls deltas (id/name first, then argument pieces), a finish_reason chunk, a usage
//                               chunk with `choices: []` when `stream_options.include_usage` is set, then `data: [DONE]`;
//                               stream:false → one `chat.completion` object
//   GET  /v1/models             an OpenAI model list
// Errors answer with OpenAI's error shape `{error:{message,type,param,code}}` (429 with retry-after and x-ratelimit-*
// headers, 5xx, 400, …); `hangup` destroys the socket without an answer (a connection reset for the client). Replies come,
// in order of preference, from the queue filled by `enqueue`, the handler set with `setHandler`, or the default script
// (see `defaultChatReply`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedHttpRequest, ReplyHandler, ScriptedMock } from './mock-http.ts';
import {
  pieces,
  readRequest,
  ReplyScript,
  scriptedMock,
  sleep,
  sseWriter,
  startMockHttp,
  writeJson,
} from './mock-http.ts';

/** A tool call the mock answers with; `arguments` is sent as a JSON string (a string is sent as is). */
export interface ChatToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  id?: string;
}

/** One scripted answer: a completion (streamed or not, as the request asks), an HTTP error, or a hang-up. */
export type ChatReply =
  | {
      kind: 'completion';
      content?: string;
      toolCalls?: ChatToolCall[];
      /** Default: 'tool_calls' when there are tool calls, else 'stop'. */
      finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
      usage?: { promptTokens?: number; completionTokens?: number; cachedTokens?: number };
      /** Wait this long before answering at all. */
      delayMs?: number;
      /** Wait this long between SSE chunks (streaming only). */
      chunkDelayMs?: number;
      /**
       * Break the connection mid-answer: streaming, the socket is destroyed after the content and tool-call deltas (no
       * finish chunk, no [DONE]); not streaming, after the status line and half of the JSON body.
       */
      cut?: boolean;
    }
  | {
      kind: 'error';
      status: number;
      message?: string;
      /** OpenAI error type, e.g. invalid_request_error, server_error, tokens, requests. */
      type?: string;
      code?: string | null;
      param?: string | null;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  | { kind: 'hangup'; delayMs?: number };

/** What the mock recorded about one request. */
export type ChatRecordedRequest = RecordedHttpRequest;

/** One message of a Chat Completions request, as far as the mock looks at it. */
export interface ChatRequestMessage {
  role?: string;
  content?: unknown;
  tool_calls?: { id?: string; type?: string; function?: { name?: string; arguments?: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** A Chat Completions request body, as far as the mock looks at it. */
export interface ChatBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: ChatRequestMessage[];
  tools?: { type?: string; function?: { name?: string; description?: string; parameters?: unknown } }[];
  [key: string]: unknown;
}

/** Decides the reply to one POST /chat/completions request. */
export type ChatHandler = ReplyHandler<ChatBody, ChatRecordedRequest, ChatReply>;

/** The mock as tests hold it (see ScriptedMock in mock-http.ts). */
export interface MockOpenAIChat extends ScriptedMock<ChatBody, ChatRecordedRequest, ChatReply> {
  /** Server root, e.g. http://127.0.0.1:40123 — clients want the base URL `${url}/v1`. */
  url: string;
  /** The POST /chat/completions requests only. */
  completionRequests(): ChatRecordedRequest[];
}

/** A text reply. */
export function chatText(text: string, extra: Partial<Extract<ChatReply, { kind: 'completion' }>> = {}): ChatReply {
  return { kind: 'completion', content: text, ...extra };
}

/** A reply that calls one tool (finish_reason tool_calls). */
export function chatToolCall(name: string, args: Record<string, unknown> | string, id?: string): ChatReply {
  return { kind: 'completion', toolCalls: [{ name, arguments: args, ...(id ? { id } : {}) }] };
}

/** The error type OpenAI uses for a status. */
function errorTypeFor(status: number): string {
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** An HTTP error reply in the OpenAI error shape; a 429 carries `retry-after` (seconds) like the real API. */
export function chatError(status: number, message = 'mock error', type = errorTypeFor(status)): ChatReply {
  const code = status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_api_key' : null;
  const headers: Record<string, string> =
    status === 429
      ? { 'retry-after': '20', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20s' }
      : {};
  return { kind: 'error', status, message, type, code, headers };
}

/** The text of a message's content (a string, or the text of its `text` parts). */
export function messageText(message: ChatRequestMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  if (!Array.isArray(message.content)) return '';
  return (message.content as { type?: unknown; text?: unknown }[])
    .filter((p) => p && p.type === 'text' && typeof p.text === 'string')
    .map((p) => String(p.text))
    .join('');
}

/** The `role:"tool"` messages after the last user message: the results of the previous reply's tool calls. */
export function pendingToolResults(body: ChatBody): ChatRequestMessage[] {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let start = 0;
  messages.forEach((m, i) => {
    if (m.role === 'user') start = i + 1;
  });
  return messages.slice(start).filter((m) => m.role === 'tool');
}

/** The text of the last `role:"user"` message ('' when there is none). */
export function lastUserText(body: ChatBody): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messageText(messages.filter((m) => m.role === 'user').at(-1));
}

/**
 * The default script: tool results after the last user message → "chat tool said: <content>"; API_ERROR in the last user
 * text → HTTP 400 invalid_request_error; USE_TOOL → a call to the first offered tool (or `echo`) with `{text:"hello"}`;
 * else "MOCK CHAT REPLY to: <text>".
 */
export function defaultChatReply(body: ChatBody): ChatReply {
  const results = pendingToolResults(body);
  if (results.length > 0) return chatText(`chat tool said: ${results.map(messageText).join('\n')}`);
  const text = lastUserText(body);
  if (text.includes('API_ERROR')) return chatError(400, 'mock bad request');
  if (text.includes('USE_TOOL')) return chatToolCall(body.tools?.[0]?.function?.name ?? 'echo', { text: 'hello' });
  return chatText(`MOCK CHAT REPLY to: ${text}`);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  writeJson(res, status, body, {
    'content-type': 'application/json',
    'x-request-id': `req_mock_${Date.now()}`,
    'openai-processing-ms': '1',
    ...headers,
  });
}

type Completion = Extract<ChatReply, { kind: 'completion' }>;
type Json = Record<string, unknown>;
const FINGERPRINT = 'fp_mock0001';

class ChatServer {
  requests: ChatRecordedRequest[] = [];
  script: ReplyScript<ChatBody, ChatRecordedRequest, ChatReply>;
  #counter = 0;

  constructor(handler: ChatHandler | undefined) {
    this.script = new ReplyScript<ChatBody, ChatRecordedRequest, ChatReply>(defaultChatReply, handler);
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { recorded } = await readRequest(req);
    const { path, body } = recorded;
    this.requests.push(recorded);
    const route = path.replace(/^\/v1(?=\/)/, '');
    if (req.method === 'GET' && route === '/models') {
      return sendJson(res, 200, {
        object: 'list',
        data: [{ id: 'gpt-mock', object: 'model', created: 0, owned_by: 'mock' }],
      });
    }
    if (req.method !== 'POST' || route !== '/chat/completions') {
      return sendJson(res, 404, {
        error: {
          message: `mock: no route ${req.method} ${path}`,
          type: 'invalid_request_error',
          param: null,
          code: 'unknown_url',
        },
      });
    }
    if (!body || typeof body !== 'object') {
      return sendJson(res, 400, {
        error: { message: 'mock: body is not JSON', type: 'invalid_request_error', param: null, code: null },
      });
    }
    const request = body as ChatBody;
    const reply = await this.script.next(request, recorded);
    await sleep(reply.delayMs ?? 0, res);
    if (res.destroyed) return;
    if (reply.kind === 'hangup') {
      res.socket?.destroy();
      return;
    }
    if (reply.kind === 'error') {
      const error = {
        message: reply.message ?? 'mock error',
        type: reply.type ?? errorTypeFor(reply.status),
        param: reply.param ?? null,
        code: reply.code ?? null,
      };
      return sendJson(res, reply.status, { error }, reply.headers);
    }
    this.#counter += 1;
    const id = `chatcmpl-mock${this.#counter}`;
    const model = typeof request.model === 'string' ? request.model : 'gpt-mock';
    if (request.stream === true)
      await this.#stream(res, reply, id, model, request.stream_options?.include_usage === true);
    else if (reply.cut) {
      const json = JSON.stringify(this.#completion(reply, id, model));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) });
      res.write(json.slice(0, Math.floor(json.length / 2)), () => res.socket?.end());
    } else sendJson(res, 200, this.#completion(reply, id, model));
  }

  #toolCalls(
    reply: Completion,
    id: string,
  ): { id: string; type: 'function'; function: { name: string; arguments: string } }[] {
    return (reply.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_${id.slice(12)}_${i}`,
      type: 'function',
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      },
    }));
  }

  #usage(reply: Completion): Json {
    const prompt = reply.usage?.promptTokens ?? 20;
    const completion = reply.usage?.completionTokens ?? 5;
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: reply.usage?.cachedTokens ?? 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    };
  }

  #finishReason(reply: Completion): string {
    return reply.finishReason ?? ((reply.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop');
  }

  #completion(reply: Completion, id: string, model: string): Json {
    const toolCalls = this.#toolCalls(reply, id);
    const message: Json = { role: 'assistant', content: reply.content ?? null, refusal: null, annotations: [] };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return {
      id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: this.#finishReason(reply) }],
      usage: this.#usage(reply),
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
    };
  }

  async #stream(
    res: ServerResponse,
    reply: Completion,
    id: string,
    model: string,
    includeUsage: boolean,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': `req_${id}`,
    });
    const created = Math.floor(Date.now() / 1000);
    const base = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
    };
    const write = sseWriter(res, { pauseMs: reply.chunkDelayMs ?? 0 });
    const send = (data: Json | '[DONE]'): Promise<void> => write(data === '[DONE]' ? data : JSON.stringify(data));
    const choice = (delta: Json, finish: string | null = null): Json => ({
      ...base,
      ...(includeUsage ? { usage: null } : {}),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    await send(choice({ role: 'assistant', content: '', refusal: null }));
    if (reply.content) for (const content of pieces(reply.content, 2)) await send(choice({ content }));
    for (const [index, call] of this.#toolCalls(reply, id).entries()) {
      await send(
        choice({
          tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }],
        }),
      );
      for (const args of pieces(call.function.arguments, 2))
        await send(choice({ tool_calls: [{ index, function: { arguments: args } }] }));
    }
    if (reply.cut) {
      // Flush what was written, then close the connection with the chunked body unfinished.
      res.socket?.end();
      return;
    }
    await send(choice({}, this.#finishReason(reply)));
    if (includeUsage) await send({ ...base, choices: [], usage: this.#usage(reply) });
    await send('[DONE]');
    res.end();
  }
}

/** Starts the mock on 127.0.0.1 (a free port). */
export async function startMockOpenAIChat(options: { handler?: ChatHandler } = {}): Promise<MockOpenAIChat> {
  const mock = new ChatServer(options.handler);
  const server = await startMockHttp({
    handle: (req, res) => mock.handle(req, res),
    fail: (res, error) =>
      sendJson(res, 500, {
        error: { message: `mock failure: ${String(error)}`, type: 'server_error', param: null, code: null },
      }),
  });
  return {
    ...scriptedMock(server, mock.requests, mock.script),
    completionRequests: () => mock.requests.filter((r) => r.method === 'POST' && /\/chat\/completions$/.test(r.path)),
  };
}

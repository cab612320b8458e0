// A scripted mock of the Anthropic Messages API on 127.0.0.1, for the real `claude` binary and for any Anthropic client
// (the AI SDK's provider included). POST /v1/messages streams SSE (message_start → content_block_start →
// content_block_delta → content_block_stop → message_delta → message_stop) when the body says `stream: true`, and answers
// one JSON message otherwise; POST /v1/messages/count_tokens answers {input_tokens}. Replies come, in order of preference,
// from the queue filled by `enqueue`, the handler set with `setHandler`, or the default script (see `defaultReply`).
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

/** A content block the mock can answer with. */
export type MockBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; id?: string; name: string; input: unknown };

/** One scripted answer: a message (streamed or not, as the request asks), or an HTTP error. */
export type MockReply =
  | {
      kind: 'message';
      content: MockBlock[];
      /** Default: 'tool_use' when a tool_use block is present, else 'end_turn'. */
      stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
      usage?: { inputTokens?: number; outputTokens?: number };
      /** Wait this long before answering at all. */
      delayMs?: number;
      /** Wait this long between SSE events (streaming only). */
      chunkDelayMs?: number;
      /**
       * Streaming only: after the content blocks, send an SSE `error` event of this type (e.g. overloaded_error) instead of
       * message_delta/message_stop, as the real API does when it fails mid-answer.
       */
      streamError?: { type: string; message?: string };
    }
  | {
      kind: 'error';
      status: number;
      /** Anthropic error type, e.g. invalid_request_error, rate_limit_error, overloaded_error, api_error. */
      errorType?: string;
      message?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    };

/** What the mock recorded about one request. */
export type RecordedRequest = RecordedHttpRequest;

/** A Messages API request body, as far as the mock looks at it. */
export interface MessagesBody {
  model?: string;
  stream?: boolean;
  messages?: { role: string; content: unknown }[];
  tools?: { name: string }[];
  [key: string]: unknown;
}

/** Decides the reply to one /v1/messages request. */
export type MockHandler = ReplyHandler<MessagesBody, RecordedRequest, MockReply>;

/** The mock as tests hold it (see ScriptedMock in mock-http.ts). */
export interface MockAnthropic extends ScriptedMock<MessagesBody, RecordedRequest, MockReply> {
  /** Base URL to give a client (ANTHROPIC_BASE_URL), e.g. http://127.0.0.1:40123 */
  url: string;
  /** The /v1/messages requests only. */
  messageRequests(): RecordedRequest[];
}

/** A text reply. */
export function textReply(text: string, extra: Partial<Extract<MockReply, { kind: 'message' }>> = {}): MockReply {
  return { kind: 'message', content: [{ type: 'text', text }], ...extra };
}

/** A reply that calls one tool (stop_reason tool_use). */
export function toolUseReply(name: string, input: unknown, id?: string): MockReply {
  return {
    kind: 'message',
    content: [{ type: 'tool_use', name, input, ...(id ? { id } : {}) }],
    stopReason: 'tool_use',
  };
}

/** An HTTP error reply in the Anthropic error shape. */
export function errorReply(status: number, message = 'mock error', errorType?: string): MockReply {
  return { kind: 'error', status, message, ...(errorType ? { errorType } : {}) };
}

type Block = { type?: unknown; text?: unknown; content?: unknown };

function blocksOf(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content.filter((b) => b && typeof b === 'object') as Block[]) : [];
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  return blocksOf(content)
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join('');
}

/** The last `role:"user"` message of a request (the CLI also sends trailing `role:"system"` entries). */
export function lastUserMessage(body: MessagesBody): { role: string; content: unknown } | undefined {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i -= 1) if (messages[i]?.role === 'user') return messages[i];
  return undefined;
}

/** The texts of a message's text blocks, skipping the CLI's `<system-reminder>` blocks when there is anything else. */
export function userTexts(message: { content: unknown } | undefined): string[] {
  const texts = blocksOf(message?.content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => String(b.text));
  const own = texts.filter((t) => !t.trimStart().startsWith('<system-reminder>'));
  return own.length > 0 ? own : texts;
}

/**
 * The default script: tool results → "tool said: <content>"; a user text containing USE_TOOL → a Bash tool_use
 * (echo hello-from-tool); API_ERROR → HTTP 400 invalid_request_error; anything else → "MOCK REPLY to: <text>".
 */
export function defaultReply(body: MessagesBody): MockReply {
  const last = lastUserMessage(body);
  const results = blocksOf(last?.content).filter((b) => b.type === 'tool_result');
  if (results.length > 0) return textReply(`tool said: ${results.map((b) => toolResultText(b.content)).join('\n')}`);
  const texts = userTexts(last);
  const all = texts.join('\n');
  if (all.includes('API_ERROR')) return errorReply(400, 'mock bad request', 'invalid_request_error');
  if (all.includes('USE_TOOL')) return toolUseReply('Bash', { command: 'echo hello-from-tool', description: 'echo' });
  return textReply(`MOCK REPLY to: ${texts.at(-1) ?? ''}`);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  writeJson(res, status, body, {
    'content-type': 'application/json',
    'request-id': `req_mock_${Date.now()}`,
    ...headers,
  });
}

class MockServer {
  requests: RecordedRequest[] = [];
  script: ReplyScript<MessagesBody, RecordedRequest, MockReply>;
  #counter = 0;
  #model: string;

  constructor(handler: MockHandler | undefined, model: string) {
    this.script = new ReplyScript<MessagesBody, RecordedRequest, MockReply>(defaultReply, handler);
    this.#model = model;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { recorded, raw } = await readRequest(req);
    const { path, body } = recorded;
    this.requests.push(recorded);
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      sendJson(res, 404, {
        type: 'error',
        error: { type: 'not_found_error', message: `mock: no route ${req.method} ${path}` },
      });
      return;
    }
    if (!body || typeof body !== 'object') {
      sendJson(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'mock: body is not JSON' },
      });
      return;
    }
    const messages = body as MessagesBody;
    const reply = await this.script.next(messages, recorded);
    if (reply.delayMs) await sleep(reply.delayMs, res);
    if (res.destroyed) return;
    if (reply.kind === 'error') {
      sendJson(
        res,
        reply.status,
        {
          type: 'error',
          error: { type: reply.errorType ?? errorTypeFor(reply.status), message: reply.message ?? 'mock error' },
        },
        reply.headers,
      );
      return;
    }
    const message = this.#message(reply, typeof messages.model === 'string' ? messages.model : this.#model);
    if (messages.stream === true) await this.#stream(res, reply, message);
    else sendJson(res, 200, message);
  }

  #message(
    reply: Extract<MockReply, { kind: 'message' }>,
    model: string,
  ): Record<string, unknown> & { content: unknown[] } {
    this.#counter += 1;
    const n = this.#counter;
    const content = reply.content.map((block, i) =>
      block.type === 'text'
        ? { type: 'text', text: block.text }
        : { type: 'tool_use', id: block.id ?? `toolu_mock_${n}_${i}`, name: block.name, input: block.input },
    );
    const hasTool = content.some((b) => b.type === 'tool_use');
    return {
      id: `msg_mock_${n}`,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: reply.stopReason ?? (hasTool ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      usage: {
        input_tokens: reply.usage?.inputTokens ?? 10,
        output_tokens: reply.usage?.outputTokens ?? 7,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
  }

  async #stream(
    res: ServerResponse,
    reply: Extract<MockReply, { kind: 'message' }>,
    message: Record<string, unknown> & { content: unknown[] },
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': `req_${String(message.id)}`,
    });
    const write = sseWriter(res, { pauseMs: reply.chunkDelayMs ?? 0 });
    const send = (event: string, data: Record<string, unknown>): Promise<void> =>
      write(JSON.stringify({ type: event, ...data }), event);
    const usage = message.usage as { input_tokens: number; output_tokens: number };
    await send('message_start', {
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    });
    for (const [index, block] of (
      message.content as (
        { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown }
      )[]
    ).entries()) {
      if (block.type === 'text') {
        await send('content_block_start', { index, content_block: { type: 'text', text: '' } });
        await send('ping', {});
        for (const text of pieces(block.text, 2))
          await send('content_block_delta', { index, delta: { type: 'text_delta', text } });
      } else {
        await send('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        for (const partial_json of pieces(JSON.stringify(block.input ?? {}), 2)) {
          await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
        }
      }
      await send('content_block_stop', { index });
    }
    if (reply.streamError) {
      await send('error', {
        error: { type: reply.streamError.type, message: reply.streamError.message ?? 'mock stream error' },
      });
      res.end();
      return;
    }
    await send('message_delta', {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    await send('message_stop', {});
    res.end();
  }
}

function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** Starts the mock on 127.0.0.1 (a free port). */
export async function startMockAnthropic(
  options: { handler?: MockHandler; model?: string } = {},
): Promise<MockAnthropic> {
  const mock = new MockServer(options.handler, options.model ?? 'claude-mock-1');
  const server = await startMockHttp({
    handle: (req, res) => mock.handle(req, res),
    fail: (res, error) =>
      sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: `mock failure: ${String(error)}` } }),
  });
  return {
    ...scriptedMock(server, mock.requests, mock.script),
    messageRequests: () => mock.requests.filter((r) => r.path === '/v1/messages'),
  };
}

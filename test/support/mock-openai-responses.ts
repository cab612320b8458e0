// A scripted mock of the OpenAI Responses API on 127.0.0.1, for the real `codex` CLI (give it the URL as a custom provider's
// base_url through `-c model_providers.<id>.base_url=…`) and for any Responses client (the AI SDK's OpenAI provider:
// baseURL `${url}/v1`). Routes (the `/v1` prefix is optional):
//   POST /v1/responses   stream:true → SSE `event:`/`data:` pairs: response.created → response.in_progress → per output
//                        item: output_item.added → (message: output_text.delta… | function_call:
//                        function_call_arguments.delta → .done) → output_item.done → response.completed {response:{…,
//                        usage}}; stream:false → one JSON response object
//   GET  /v1/models      an OpenAI model list
// A WebSocket upgrade (Codex tries one for its built-in provider) is refused with 426 so the client falls back to HTTP.
// Replies come, in order of preference, from the queue filled by `enqueue`, the handler set with `setHandler`, or the
// default script (see `defaultResponsesReply`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RecordedHttpRequest, ReplyHandler, ScriptedMock } from './mock-http.ts';
import {
  readRequest,
  ReplyScript,
  scriptedMock,
  sleep,
  splitUrl,
  sseWriter,
  startMockHttp,
  writeJson,
} from './mock-http.ts';

/** One output item of a scripted response. */
export type ResponsesOutput =
  | { type: 'message'; text: string }
  | { type: 'function_call'; name: string; arguments: Record<string, unknown> | string; callId?: string }
  /** Any other output item (reasoning, web_search_call…), sent as given with only `output_item.added` / `.done`. */
  | { type: 'raw'; item: Record<string, unknown> };

/** One scripted answer: a response (streamed or not, as the request asks), or an HTTP error. */
export type ResponsesReply =
  | {
      kind: 'response';
      output: ResponsesOutput[];
      usage?: { inputTokens?: number; outputTokens?: number; cachedTokens?: number; reasoningTokens?: number };
      /** `delayMs` before answering at all; `chunkDelayMs` between SSE events (streaming only). */
      delayMs?: number;
      chunkDelayMs?: number;
    }
  | {
      kind: 'error';
      status: number;
      message?: string;
      type?: string;
      code?: string;
      /** Extra response headers, e.g. `retry-after` on a 429. */
      headers?: Record<string, string>;
      delayMs?: number;
    };

/** What the mock recorded about one request: path without the query, parsed JSON body (undefined if none or not JSON). */
export interface ResponsesRecordedRequest extends RecordedHttpRequest {
  /** True for a refused WebSocket upgrade. */
  upgrade?: boolean;
}

/** An input item of a Responses request, as far as the mock looks at it. */
export type ResponsesInputItem = {
  type?: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  output?: unknown;
  [key: string]: unknown;
};

/** A Responses request body, as far as the mock looks at it. */
export interface ResponsesBody {
  model?: string;
  stream?: boolean;
  instructions?: string;
  input?: ResponsesInputItem[] | string;
  tools?: { type?: string; name?: string }[];
  [key: string]: unknown;
}

/** Decides the reply to one POST /responses request. */
export type ResponsesHandler = ReplyHandler<ResponsesBody, ResponsesRecordedRequest, ResponsesReply>;

/** The mock as tests hold it (see ScriptedMock in mock-http.ts). */
export interface MockResponses extends ScriptedMock<ResponsesBody, ResponsesRecordedRequest, ResponsesReply> {
  /** Server root, e.g. http://127.0.0.1:40123 — clients want the base URL `${url}/v1`. */
  url: string;
  /** The POST /responses requests only. */
  responseRequests(): ResponsesRecordedRequest[];
}

/** A reply with one assistant message. */
export function responsesText(
  text: string,
  extra: Partial<Extract<ResponsesReply, { kind: 'response' }>> = {},
): ResponsesReply {
  return { kind: 'response', output: [{ type: 'message', text }], ...extra };
}

/** A reply that calls one function (e.g. Codex's `exec_command` with `{cmd}`). */
export function responsesFunctionCall(
  name: string,
  args: Record<string, unknown> | string,
  callId?: string,
): ResponsesReply {
  return {
    kind: 'response',
    output: [{ type: 'function_call', name, arguments: args, ...(callId ? { callId } : {}) }],
  };
}

/** An HTTP error reply in the OpenAI error shape. */
export function responsesError(
  status: number,
  message = 'mock error',
  type = status >= 500 ? 'server_error' : 'invalid_request_error',
): ResponsesReply {
  return { kind: 'error', status, message, type };
}

/** The input items of a request (a string input counts as one user message). */
export function inputItems(body: ResponsesBody): ResponsesInputItem[] {
  if (typeof body.input === 'string') return [{ type: 'message', role: 'user', content: body.input }];
  return Array.isArray(body.input) ? body.input.filter((i) => i && typeof i === 'object') : [];
}

/** The texts of one input item's content (`input_text` / `output_text` parts, or a string content). */
export function itemTexts(item: ResponsesInputItem): string[] {
  if (typeof item.content === 'string') return [item.content];
  if (!Array.isArray(item.content)) return [];
  return (item.content as { text?: unknown }[])
    .filter((p) => p && typeof p.text === 'string')
    .map((p) => String(p.text));
}

/** Every message text of the request's input, in order (all roles). */
export function allInputTexts(body: ResponsesBody): string[] {
  return inputItems(body).flatMap((item) => (item.type === 'message' || item.role ? itemTexts(item) : []));
}

/** The text of the last `role:"user"` message ('' when there is none). */
export function lastUserText(body: ResponsesBody): string {
  const user = inputItems(body).filter((i) => i.role === 'user');
  return itemTexts(user.at(-1) ?? {}).join('\n');
}

/** The `function_call_output` items after the last user message: the results of the previous reply's calls. */
export function pendingToolOutputs(body: ResponsesBody): ResponsesInputItem[] {
  const items = inputItems(body);
  let start = 0;
  items.forEach((item, index) => {
    if (item.role === 'user') start = index + 1;
  });
  return items.slice(start).filter((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
}

/**
 * The default script: function call outputs after the last user message → "codex tool output was: <output>"; API_ERROR in
 * the last user text → HTTP 400; USE_TOOL → a shell call (`exec_command {cmd}` when offered, else `shell {command:[…]}`)
 * running `echo hello-from-codex-tool`; else "MOCK CODEX REPLY".
 */
export function defaultResponsesReply(body: ResponsesBody): ResponsesReply {
  const outputs = pendingToolOutputs(body);
  const texts = outputs.map((o) => (typeof o.output === 'string' ? o.output : JSON.stringify(o.output)));
  if (outputs.length > 0) return responsesText(`codex tool output was: ${texts.join('\n')}`);
  const text = lastUserText(body);
  if (text.includes('API_ERROR')) return responsesError(400, 'mock bad request');
  if (text.includes('USE_TOOL')) {
    const offered = new Set((body.tools ?? []).map((t) => t.name));
    const command = 'echo hello-from-codex-tool';
    if (offered.has('exec_command') || !offered.has('shell'))
      return responsesFunctionCall('exec_command', { cmd: command });
    return responsesFunctionCall('shell', { command: ['bash', '-lc', command] });
  }
  return responsesText('MOCK CODEX REPLY');
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  writeJson(res, status, body, {
    'content-type': 'application/json',
    'x-request-id': `req_mock_${Date.now()}`,
    ...headers,
  });
}

type Content = Extract<ResponsesReply, { kind: 'response' }>;
type Json = Record<string, unknown>;

class ResponsesServer {
  requests: ResponsesRecordedRequest[] = [];
  script: ReplyScript<ResponsesBody, ResponsesRecordedRequest, ResponsesReply>;

  constructor(handler: ResponsesHandler | undefined) {
    this.script = new ReplyScript<ResponsesBody, ResponsesRecordedRequest, ResponsesReply>(
      defaultResponsesReply,
      handler,
    );
  }

  refuseUpgrade(req: IncomingMessage, socket: Duplex): void {
    const { path, query } = splitUrl(req.url);
    this.requests.push({
      method: req.method ?? 'GET',
      path,
      query,
      headers: req.headers,
      body: undefined,
      upgrade: true,
    });
    const text = 'mock: use HTTP, not WebSocket';
    socket.end(
      `HTTP/1.1 426 Upgrade Required\r\ncontent-type: text/plain\r\ncontent-length: ${text.length}\r\nconnection: close\r\n\r\n${text}`,
    );
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { recorded } = await readRequest(req);
    const { path, body } = recorded;
    this.requests.push(recorded);
    const route = path.replace(/^\/v1(?=\/)/, '');
    if (req.method === 'GET' && route === '/models') {
      return sendJson(res, 200, {
        object: 'list',
        data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'mock' }],
      });
    }
    if (req.method !== 'POST' || route !== '/responses')
      return sendJson(res, 404, {
        error: { message: `mock: no route ${req.method} ${path}`, type: 'invalid_request_error' },
      });
    if (!body || typeof body !== 'object')
      return sendJson(res, 400, { error: { message: 'mock: body is not JSON', type: 'invalid_request_error' } });
    const request = body as ResponsesBody;
    const reply = await this.script.next(request, recorded);
    await sleep(reply.delayMs ?? 0, res);
    if (res.destroyed) return;
    if (reply.kind === 'error') {
      const error = {
        message: reply.message ?? 'mock error',
        type: reply.type ?? 'invalid_request_error',
        param: null,
        code: reply.code ?? null,
      };
      return sendJson(res, reply.status, { error }, reply.headers);
    }
    const response = this.#response(reply, request, `resp_mock_${this.requests.length}`);
    if (request.stream === true) await this.#stream(res, reply, response);
    else sendJson(res, 200, response);
  }

  #item(output: ResponsesOutput, index: number, responseId: string): Json {
    if (output.type === 'raw') return { id: `item_${responseId.slice(10)}_${index}`, ...output.item };
    const id = `${output.type === 'message' ? 'msg' : 'fc'}_${responseId.slice(10)}_${index}`;
    if (output.type === 'message') {
      return {
        type: 'message',
        id,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: output.text, annotations: [] }],
      };
    }
    const args = typeof output.arguments === 'string' ? output.arguments : JSON.stringify(output.arguments);
    return {
      type: 'function_call',
      id,
      status: 'completed',
      call_id: output.callId ?? `call_${responseId.slice(10)}_${index}`,
      name: output.name,
      arguments: args,
    };
  }

  #response(reply: Content, request: ResponsesBody, id: string): Json {
    const input = reply.usage?.inputTokens ?? 100;
    const output = reply.usage?.outputTokens ?? 10;
    const cached = { cached_tokens: reply.usage?.cachedTokens ?? 0 };
    const reasoning = { reasoning_tokens: reply.usage?.reasoningTokens ?? 0 };
    const usage = {
      input_tokens: input,
      input_tokens_details: cached,
      output_tokens: output,
      output_tokens_details: reasoning,
      total_tokens: input + output,
    };
    const items = reply.output.map((o, i) => this.#item(o, i, id));
    return {
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model: request.model ?? 'mock-model',
      output: items,
      usage,
    };
  }

  async #stream(res: ServerResponse, reply: Content, response: Json): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const write = sseWriter(res, { pauseMs: reply.chunkDelayMs ?? 0 });
    let sequence = 0;
    const send = (type: string, data: Json): Promise<void> =>
      write(JSON.stringify({ type, sequence_number: sequence++, ...data }), type);
    const pending = { ...response, status: 'in_progress', output: [], usage: null };
    await send('response.created', { response: pending });
    await send('response.in_progress', { response: pending });
    for (const [index, item] of (response.output as Json[]).entries()) {
      const id = String(item.id);
      if (item.type === 'message') {
        const text = String((item.content as { text: string }[])[0]?.text ?? '');
        await send('response.output_item.added', {
          output_index: index,
          item: { ...item, status: 'in_progress', content: [] },
        });
        const halves = [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))].filter(
          Boolean,
        );
        for (const delta of halves)
          await send('response.output_text.delta', {
            item_id: id,
            output_index: index,
            content_index: 0,
            delta,
            logprobs: [],
          });
      } else if (item.type === 'function_call') {
        const args = String(item.arguments);
        await send('response.output_item.added', {
          output_index: index,
          item: { ...item, status: 'in_progress', arguments: '' },
        });
        await send('response.function_call_arguments.delta', { item_id: id, output_index: index, delta: args });
        await send('response.function_call_arguments.done', { item_id: id, output_index: index, arguments: args });
      } else {
        await send('response.output_item.added', { output_index: index, item });
      }
      await send('response.output_item.done', { output_index: index, item });
    }
    await send('response.completed', { response });
    res.end();
  }
}

/** Starts the mock on 127.0.0.1 (a free port). */
export async function startMockResponses(options: { handler?: ResponsesHandler } = {}): Promise<MockResponses> {
  const mock = new ResponsesServer(options.handler);
  const server = await startMockHttp({
    handle: (req, res) => mock.handle(req, res),
    fail: (res, error) =>
      sendJson(res, 500, { error: { message: `mock failure: ${String(error)}`, type: 'server_error' } }),
    upgrade: (req, socket) => mock.refuseUpgrade(req, socket),
  });
  return {
    ...scriptedMock(server, mock.requests, mock.script),
    responseRequests: () => mock.requests.filter((r) => r.method === 'POST' && /\/responses$/.test(r.path)),
  };
}

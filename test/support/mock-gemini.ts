// A scripted mock of the Gemini API (generativelanguage v1beta) on 127.0.0.1, for the real `gemini` CLI and for any Gemini
// client (the AI SDK's Google provider: give it baseURL `${url}/v1beta`). Routes:
//   POST /v1beta/models/{model}:generateContent            one JSON response
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse   SSE `data: {candidates,usageMetadata}` chunks
//   POST /v1beta/models/{model}:countTokens                {totalTokens}
//   GET  /v1beta/models[/{model}]                          a model listing
// A generateContent request whose generationConfig carries `responseJsonSchema` (or `responseSchema`) is, for the CLI, its
// model router/classifier: by default the mock answers it itself with a minimal object valid for that schema (first enum
// value, required properties), because the CLI retries an invalid answer until it times out. Pass
// `answerSchemaRequests: false` to script those too (e.g. AI SDK structured output). Every other request is answered, in
// order of preference, from the queue filled by `enqueue`, the handler set with `setHandler`, or the default script
// (see `defaultGeminiReply`).
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

/** A part of a model reply. */
export type GeminiPart = { text: string } | { functionCall: { name: string; args: Record<string, unknown> } };

/** One scripted answer: model content (streamed or not, as the route asks), or an HTTP error. */
export type GeminiReply =
  | {
      kind: 'content';
      parts: GeminiPart[];
      /** Default STOP. */
      finishReason?: string;
      usage?: { promptTokens?: number; candidatesTokens?: number; cachedTokens?: number };
      /** Wait this long before answering at all. */
      delayMs?: number;
      /** Wait this long between SSE chunks (streaming only). */
      chunkDelayMs?: number;
    }
  | { kind: 'error'; status: number; message?: string; statusText?: string; delayMs?: number };

/** What the mock recorded about one request (its path e.g. /v1beta/models/gemini-2.5-pro:streamGenerateContent). */
export interface GeminiRecordedRequest extends RecordedHttpRequest {
  /** The model named in the path ('' when none). */
  model: string;
  /** generateContent | streamGenerateContent | countTokens | list | get | other */
  action: string;
  /** Whether the queue / handler / default script answered it (false for schema requests the mock answered itself). */
  scripted: boolean;
}

/** A generateContent request body, as far as the mock looks at it. */
export interface GeminiBody {
  contents?: { role?: string; parts?: Record<string, unknown>[] }[];
  generationConfig?: { responseJsonSchema?: unknown; responseSchema?: unknown; [key: string]: unknown };
  tools?: unknown[];
  [key: string]: unknown;
}

/** Decides the reply to one (non-classifier) generateContent / streamGenerateContent request. */
export type GeminiHandler = ReplyHandler<GeminiBody, GeminiRecordedRequest, GeminiReply>;

/** The mock as tests hold it (see ScriptedMock in mock-http.ts). */
export interface MockGemini extends ScriptedMock<GeminiBody, GeminiRecordedRequest, GeminiReply> {
  /** Base URL to give the CLI (GOOGLE_GEMINI_BASE_URL), e.g. http://127.0.0.1:40123 — the AI SDK wants `${url}/v1beta`. */
  url: string;
  /** The content requests answered by the script (not the schema requests the mock answered itself, not countTokens). */
  contentRequests(): GeminiRecordedRequest[];
}

/** A text reply. */
export function geminiText(text: string, extra: Partial<Extract<GeminiReply, { kind: 'content' }>> = {}): GeminiReply {
  return { kind: 'content', parts: [{ text }], ...extra };
}

/** A reply that calls one function. */
export function geminiFunctionCall(name: string, args: Record<string, unknown>): GeminiReply {
  return { kind: 'content', parts: [{ functionCall: { name, args } }] };
}

/** An HTTP error reply in the Google API error shape. */
export function geminiError(status: number, message = 'mock error', statusText?: string): GeminiReply {
  return { kind: 'error', status, message, ...(statusText ? { statusText } : {}) };
}

/** The last `role:"user"` content of a request (function responses come back as user content). */
export function lastUserContent(body: GeminiBody): { role?: string; parts?: Record<string, unknown>[] } | undefined {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  for (let i = contents.length - 1; i >= 0; i -= 1) if (contents[i]?.role === 'user') return contents[i];
  return undefined;
}

/** Every text part of the request's contents, in order (all roles). */
export function allTexts(body: GeminiBody): string[] {
  const out: string[] = [];
  for (const content of Array.isArray(body.contents) ? body.contents : []) {
    for (const part of content.parts ?? []) if (typeof part.text === 'string') out.push(part.text);
  }
  return out;
}

function partsOf(content: { parts?: Record<string, unknown>[] } | undefined): Record<string, unknown>[] {
  return Array.isArray(content?.parts) ? content.parts.filter((p) => p && typeof p === 'object') : [];
}

/**
 * The default script: functionResponse parts in the last user content → "gemini tool said: <response JSON>"; USE_TOOL in
 * its text → run_shell_command `echo hello-from-gemini-tool`; API_ERROR → HTTP 400 INVALID_ARGUMENT; else
 * "MOCK GEMINI REPLY".
 */
export function defaultGeminiReply(body: GeminiBody): GeminiReply {
  const parts = partsOf(lastUserContent(body));
  const responses = parts
    .filter((p) => p.functionResponse !== undefined)
    .map((p) => p.functionResponse as { response?: unknown });
  if (responses.length > 0)
    return geminiText(`gemini tool said: ${responses.map((r) => JSON.stringify(r.response ?? r)).join('\n')}`);
  const text = parts
    .filter((p) => typeof p.text === 'string')
    .map((p) => String(p.text))
    .join('\n');
  if (text.includes('API_ERROR')) return geminiError(400, 'mock bad request', 'INVALID_ARGUMENT');
  if (text.includes('USE_TOOL'))
    return geminiFunctionCall('run_shell_command', { command: 'echo hello-from-gemini-tool', description: 'echo' });
  return geminiText('MOCK GEMINI REPLY');
}

type Schema = {
  type?: unknown;
  enum?: unknown;
  properties?: unknown;
  required?: unknown;
  items?: unknown;
  anyOf?: unknown;
  oneOf?: unknown;
  const?: unknown;
  minItems?: unknown;
  minimum?: unknown;
};

/**
 * A minimal value valid for a JSON schema (OpenAPI-style upper-case types too): first enum value, every required property,
 * 'mock' for strings, `minimum` (else 1: the CLI's classifier wants a 1-100 score it does not put in the schema) for numbers.
 */
export function minimalValueFor(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as Schema;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const variants = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (variants && variants.length > 0) return minimalValueFor(variants[0]);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (String(type).toLowerCase()) {
    case 'object': {
      const props = s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {};
      const required = Array.isArray(s.required) ? s.required.map(String) : Object.keys(props);
      const out: Record<string, unknown> = {};
      for (const key of required) out[key] = minimalValueFor(props[key]);
      return out;
    }
    case 'array': {
      const count = typeof s.minItems === 'number' ? s.minItems : 0;
      return Array.from({ length: count }, () => minimalValueFor(s.items));
    }
    case 'string':
      return 'mock';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  writeJson(res, status, body, { 'content-type': 'application/json; charset=UTF-8' });
}

function statusTextFor(status: number): string {
  if (status === 400) return 'INVALID_ARGUMENT';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status === 503) return 'UNAVAILABLE';
  return 'INTERNAL';
}

const ROUTE = /^\/v1(?:beta|alpha)?\/models(?:\/([^/:]+))?(?::([A-Za-z]+))?$/;

class GeminiServer {
  requests: GeminiRecordedRequest[] = [];
  script: ReplyScript<GeminiBody, GeminiRecordedRequest, GeminiReply>;
  #answerSchemaRequests: boolean;

  constructor(handler: GeminiHandler | undefined, answerSchemaRequests: boolean) {
    this.script = new ReplyScript<GeminiBody, GeminiRecordedRequest, GeminiReply>(defaultGeminiReply, handler);
    this.#answerSchemaRequests = answerSchemaRequests;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { recorded: http, raw } = await readRequest(req);
    const { path, body } = http;
    const match = ROUTE.exec(path);
    const model = match?.[1] ?? '';
    const verb = match?.[2];
    const action = !match ? 'other' : verb ? verb : model ? 'get' : 'list';
    const recorded: GeminiRecordedRequest = { ...http, model, action, scripted: false };
    this.requests.push(recorded);
    if (!match)
      return sendJson(res, 404, {
        error: { code: 404, message: `mock: no route ${req.method} ${path}`, status: 'NOT_FOUND' },
      });
    if (req.method === 'GET' && action === 'list') {
      return sendJson(res, 200, {
        models: [
          {
            name: 'models/gemini-mock',
            displayName: 'Gemini Mock',
            supportedGenerationMethods: ['generateContent', 'countTokens'],
          },
        ],
      });
    }
    if (req.method === 'GET' && action === 'get') {
      return sendJson(res, 200, {
        name: `models/${model}`,
        displayName: model,
        supportedGenerationMethods: ['generateContent', 'countTokens'],
      });
    }
    if (req.method !== 'POST')
      return sendJson(res, 405, { error: { code: 405, message: 'mock: POST only', status: 'INVALID_ARGUMENT' } });
    const request = (body && typeof body === 'object' ? body : {}) as GeminiBody;
    if (action === 'countTokens') return sendJson(res, 200, { totalTokens: Math.max(1, Math.ceil(raw.length / 4)) });
    if (action !== 'generateContent' && action !== 'streamGenerateContent') {
      return sendJson(res, 404, { error: { code: 404, message: `mock: no action ${action}`, status: 'NOT_FOUND' } });
    }
    const schema = request.generationConfig?.responseJsonSchema ?? request.generationConfig?.responseSchema;
    recorded.scripted = !(this.#answerSchemaRequests && action === 'generateContent' && schema !== undefined);
    const reply: GeminiReply = !recorded.scripted
      ? geminiText(JSON.stringify(minimalValueFor(schema)))
      : await this.script.next(request, recorded);
    if (reply.delayMs) await sleep(reply.delayMs, res);
    if (res.destroyed) return;
    if (reply.kind === 'error') {
      return sendJson(res, reply.status, {
        error: {
          code: reply.status,
          message: reply.message ?? 'mock error',
          status: reply.statusText ?? statusTextFor(reply.status),
        },
      });
    }
    if (action === 'streamGenerateContent') await this.#stream(res, reply);
    else sendJson(res, 200, this.#chunk(reply.parts, reply, true));
  }

  #usage(reply: Extract<GeminiReply, { kind: 'content' }>): Record<string, number> {
    const prompt = reply.usage?.promptTokens ?? 100;
    const candidates = reply.usage?.candidatesTokens ?? 10;
    return {
      promptTokenCount: prompt,
      candidatesTokenCount: candidates,
      totalTokenCount: prompt + candidates,
      ...(reply.usage?.cachedTokens ? { cachedContentTokenCount: reply.usage.cachedTokens } : {}),
    };
  }

  #chunk(
    parts: GeminiPart[],
    reply: Extract<GeminiReply, { kind: 'content' }>,
    last: boolean,
  ): Record<string, unknown> {
    return {
      candidates: [
        {
          content: { role: 'model', parts },
          index: 0,
          ...(last ? { finishReason: reply.finishReason ?? 'STOP' } : {}),
        },
      ],
      ...(last ? { usageMetadata: this.#usage(reply) } : {}),
      modelVersion: 'gemini-mock',
      responseId: `mock-${this.requests.length}`,
    };
  }

  async #stream(res: ServerResponse, reply: Extract<GeminiReply, { kind: 'content' }>): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Text parts go out in two chunks each (so clients see deltas); the last chunk carries finishReason and usage.
    const chunks: GeminiPart[][] = [];
    for (const part of reply.parts) {
      if ('text' in part) for (const text of pieces(part.text, 2)) chunks.push([{ text }]);
      else chunks.push([part]);
    }
    if (chunks.length === 0) chunks.push([{ text: '' }]);
    const write = sseWriter(res, { eol: '\r\n' });
    for (const [i, parts] of chunks.entries()) {
      if (res.destroyed) return;
      await write(JSON.stringify(this.#chunk(parts, reply, i === chunks.length - 1)));
      if (reply.chunkDelayMs && i < chunks.length - 1) await sleep(reply.chunkDelayMs, res);
    }
    res.end();
  }
}

/** Starts the mock on 127.0.0.1 (a free port). */
export async function startMockGemini(
  options: { handler?: GeminiHandler; answerSchemaRequests?: boolean } = {},
): Promise<MockGemini> {
  const mock = new GeminiServer(options.handler, options.answerSchemaRequests ?? true);
  const server = await startMockHttp({
    handle: (req, res) => mock.handle(req, res),
    fail: (res, error) =>
      sendJson(res, 500, { error: { code: 500, message: `mock failure: ${String(error)}`, status: 'INTERNAL' } }),
  });
  return {
    ...scriptedMock(server, mock.requests, mock.script),
    contentRequests: () => mock.requests.filter((r) => r.scripted),
  };
}

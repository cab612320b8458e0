// The HTTP scaffolding the mock model servers share (mock-anthropic, mock-gemini, mock-openai-chat,
// mock-openai-responses): a server on 127.0.0.1 with a free port, each request read and recorded, scripted replies taken
// from a queue then a handler then a default script, JSON and SSE writing, and scripted delays that end early when the
// client goes away. Each mock keeps its own routes, wire format and error shape.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

/** What a mock records about one request. */
export interface RecordedHttpRequest {
  method: string;
  /** Path without the query string, e.g. /v1/messages. */
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when there was none or it did not parse). */
  body: unknown;
}

/** The path and the query string of a request URL. */
export function splitUrl(url: string | undefined): { path: string; query: string } {
  const [path = '/', query = ''] = (url ?? '/').split('?', 2);
  return { path, query };
}

/** The whole body of a request, as UTF-8 text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads a whole request: its recorded form (the body parsed as JSON when it is JSON) and its raw body text. */
export async function readRequest(req: IncomingMessage): Promise<{ recorded: RecordedHttpRequest; raw: string }> {
  const { path, query } = splitUrl(req.url);
  const raw = await readBody(req);
  let body: unknown;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    body = undefined;
  }
  return { recorded: { method: req.method ?? 'GET', path, query, headers: req.headers, body }, raw };
}

/** Waits `ms`, or less if the client goes away (so a closed mock never waits on a scripted delay). */
export function sleep(ms: number, res: ServerResponse): Promise<void> {
  if (!ms || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}

/** Answers with `body` as JSON, with exactly the given headers (each mock passes its API's content type and ids). */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  res.writeHead(status, headers);
  res.end(JSON.stringify(body));
}

/**
 * A writer of server-sent events on `res` (headers already written): each call writes `[event: <event>]` and
 * `data: <data>` lines ended by `eol`, then waits `pauseMs`; once the client is gone it writes and waits nothing.
 */
export function sseWriter(
  res: ServerResponse,
  options: { pauseMs?: number; eol?: '\n' | '\r\n' } = {},
): (data: string, event?: string) => Promise<void> {
  const eol = options.eol ?? '\n';
  return async (data, event) => {
    if (res.destroyed) return;
    res.write(`${event === undefined ? '' : `event: ${event}${eol}`}data: ${data}${eol}${eol}`);
    await sleep(options.pauseMs ?? 0, res);
  };
}

/** Splits a string into at most `parts` non-empty pieces (a string of 0 or 1 characters is one piece). */
export function pieces(text: string, parts: number): string[] {
  if (text.length <= 1) return [text];
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Decides a reply from a request's body and its record. */
export type ReplyHandler<Body, Recorded, Reply> = (body: Body, request: Recorded) => Reply | Promise<Reply>;

/** Where a mock's replies come from, in order of preference: the queue (`enqueue`), the handler (`setHandler`), the default script. */
export class ReplyScript<Body, Recorded, Reply> {
  #queue: Reply[] = [];
  #handler: ReplyHandler<Body, Recorded, Reply> | undefined;
  #fallback: ReplyHandler<Body, Recorded, Reply>;

  constructor(fallback: ReplyHandler<Body, Recorded, Reply>, handler?: ReplyHandler<Body, Recorded, Reply>) {
    this.#fallback = fallback;
    this.#handler = handler;
  }

  /** Replaces the handler; `undefined` restores the default script. */
  setHandler(handler: ReplyHandler<Body, Recorded, Reply> | undefined): void {
    this.#handler = handler;
  }

  /** Queues replies, used one per request before the handler. */
  enqueue(replies: Reply[]): void {
    this.#queue.push(...replies);
  }

  /** The reply to one request: the next queued one, else the handler's, else the default script's. */
  async next(body: Body, request: Recorded): Promise<Reply> {
    return this.#queue.shift() ?? (await (this.#handler ?? this.#fallback)(body, request));
  }
}

/** What every scripted mock offers its tests: where it listens, what it received, and the script of its replies. */
export interface ScriptedMock<Body, Recorded, Reply> {
  /** Server root, e.g. http://127.0.0.1:40123 (each mock says which base URL its clients want). */
  url: string;
  /** Every request received, in order. */
  requests: Recorded[];
  /** Replaces the handler used when the queue is empty; `undefined` restores the default script. */
  setHandler(handler: ReplyHandler<Body, Recorded, Reply> | undefined): void;
  /** Queues replies used, one per scripted request, before the handler. */
  enqueue(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** The shared part of a mock's handle, over its running server, its request record and its reply script. */
export function scriptedMock<Body, Recorded, Reply>(
  server: MockHttpServer,
  requests: Recorded[],
  script: ReplyScript<Body, Recorded, Reply>,
): ScriptedMock<Body, Recorded, Reply> {
  return {
    url: server.url,
    requests,
    setHandler: (handler) => script.setHandler(handler),
    enqueue: (...replies) => script.enqueue(replies),
    close: () => server.close(),
  };
}

/** A running mock server. */
export interface MockHttpServer {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  /** Drops every open connection and stops listening. */
  close(): Promise<void>;
}

export interface MockHttpOptions {
  /** Answers one request. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Answers a request whose `handle` threw before any header went out (a 500 in the API's error shape); after that the socket is destroyed. */
  fail(res: ServerResponse, error: unknown): void;
  /** Handles a protocol upgrade (WebSocket) request. */
  upgrade?: (req: IncomingMessage, socket: Duplex) => void;
}

/** Starts a mock server on 127.0.0.1 (a free port). */
export async function startMockHttp(options: MockHttpOptions): Promise<MockHttpServer> {
  const server = createServer((req, res) => {
    options.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) options.fail(res, error);
      else res.destroy();
    });
  });
  const { upgrade } = options;
  if (upgrade) server.on('upgrade', (req: IncomingMessage, socket: Duplex) => upgrade(req, socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

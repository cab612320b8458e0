import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ChatFeed, WebConnector } from '../channels/web/web-connector.ts';
import type { Clock, Timer } from '../core/clock.ts';
import type { WebButton, WebMessage } from '../store/web-transcript.ts';

/**
 * What a page is sent for one transcript message (the chat id is the stream's own). `buttons` are the rows under a
 * daemon message (empty when it has none); an edit sends the same `pos` again under a new `version`.
 */
export interface WebMessageView {
  pos: number;
  version: number;
  role: WebMessage['role'];
  text: string;
  status: WebMessage['status'];
  clientId: string | null;
  error: string | null;
  buttons: WebButton[][];
  createdAt: number;
}

/** The page's view of a transcript row. */
export function messageView(m: WebMessage): WebMessageView {
  return {
    pos: m.pos,
    version: m.version,
    role: m.role,
    text: m.text,
    status: m.status,
    clientId: m.clientId,
    error: m.error,
    buttons: m.buttons ?? [],
    createdAt: m.createdAt,
  };
}

/** One transcript change as a Server-Sent Event: id = version, event = `message`. */
export function chatFrame(m: WebMessage): string {
  return `id: ${m.version}\nevent: message\ndata: ${JSON.stringify(messageView(m))}\n\n`;
}

/** Parses where a chat stream resumes: the `Last-Event-ID` header, else `?after=N`; null = from the recent history. */
export function resumeVersion(
  lastEventId: string | undefined,
  after: string | undefined,
): { ok: true; version: number | null } | { ok: false } {
  const value = lastEventId !== undefined && lastEventId !== '' ? lastEventId : after;
  if (value === undefined || value === '') return { ok: true, version: null };
  return /^\d{1,15}$/.test(value) ? { ok: true, version: Number(value) } : { ok: false };
}

export interface ChatStreamDeps {
  connector: WebConnector;
  clock: Clock;
  keepAliveMs: number;
  /** Extra response headers (the page's security headers). */
  headers: Record<string, string>;
  /** Registers the stream's closer so the gateway can end it on shutdown; returns the unregister function. */
  track(end: () => void): () => void;
}

/**
 * Streams chat `chatId` to the requesting page: the history it is missing (after `version`, or the recent messages),
 * then every change live, with a keep-alive comment every `keepAliveMs`. Takes over the reply (hijack). Resolves once
 * the history is written; rejects (after ending the stream, which the page then reopens) when it cannot be read.
 */
export async function streamChat(
  request: FastifyRequest,
  reply: FastifyReply,
  chatId: string,
  version: number | null,
  deps: ChatStreamDeps,
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...deps.headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.write('retry: 2000\n\n');
  let sent = version ?? 0;
  let ended = false;
  /** Changes that arrive while the history is read; null once it is written. */
  let backlog: WebMessage[] | null = [];
  let feed: ChatFeed | null = null;
  let keepAlive: Timer | null = null;
  const write = (m: WebMessage): void => {
    if (ended || m.version <= sent) return;
    sent = m.version;
    raw.write(chatFrame(m));
  };
  const end = (): void => {
    if (ended) return;
    ended = true;
    keepAlive?.cancel();
    feed?.close();
    untrack();
    raw.end();
  };
  const untrack = deps.track(end);
  request.raw.on('close', end);
  try {
    // The watcher is subscribed at the call, before the history is read, so no change falls in between.
    const onMessage = (m: WebMessage): void => {
      if (backlog) backlog.push(m);
      else write(m);
    };
    feed = await deps.connector.follow(chatId, version, { onMessage, onClose: end });
  } catch (error) {
    end();
    throw error;
  }
  if (ended) {
    feed.close();
    return;
  }
  // History and backlog in version order; a change in both is written once (write skips versions already sent).
  const missed = [...feed.history, ...backlog].sort((a, b) => a.version - b.version);
  backlog = null;
  for (const m of missed) write(m);
  keepAlive = deps.clock.every(deps.keepAliveMs, () => {
    if (!ended) raw.write(': keep-alive\n\n');
  });
}

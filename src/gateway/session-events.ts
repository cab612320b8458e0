import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SessionManager } from '../coding/session-manager.ts';
import type { Clock } from '../core/clock.ts';
import { AppError } from '../core/errors.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import type { SessionRecordSource } from '../store/session-logs.ts';

/** What the SSE route reads from: the sessions, their records, the caller check and the clock of its keep-alive. */
export interface SessionEventsDeps {
  sessions: SessionManager;
  /** The sessions' records on whichever node they run (the local logs in a cluster of one). */
  records: SessionRecordSource;
  /** True when the request may read session events (bearer token, or the web page's cookie). */
  authorize: (request: FastifyRequest) => boolean;
  /** Times the keep-alive comments. */
  clock: Clock;
  keepAliveMs?: number;
}

/** Formats one log record as a Server-Sent Event (id = seq, event = record type). */
export function sseFrame(record: LogRecord): string {
  return `id: ${record.seq}\nevent: ${record.type}\ndata: ${JSON.stringify(record)}\n\n`;
}

function startSeq(lastEventId: string | undefined, from: string | undefined): number | null {
  if (lastEventId !== undefined && lastEventId !== '') {
    return /^\d+$/.test(lastEventId) ? Number(lastEventId) + 1 : null;
  }
  if (from !== undefined) return /^\d+$/.test(from) ? Math.max(1, Number(from)) : null;
  return 1;
}

/**
 * GET /sessions/:ref/events — a session's log as Server-Sent Events from any seq (`?from=N`, or after the
 * `Last-Event-ID` a reconnecting client sends), then live. Live records are buffered while history is read, so
 * nothing falls between the two.
 */
export function registerSessionEvents(app: FastifyInstance, deps: SessionEventsDeps): void {
  // Open streams never end by themselves: end them when the gateway closes, or app.close() waits for them forever.
  const open = new Set<() => void>();
  app.addHook('preClose', (done) => {
    for (const end of [...open]) end();
    done();
  });
  // Checked before anything else of the request is read; a refused caller's connection is closed.
  const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> =>
    deps.authorize(request)
      ? undefined
      : reply
          .code(401)
          .header('connection', 'close')
          .send({ error: 'missing or invalid bearer token (or web page cookie)' });
  app.get<{ Params: { ref: string }; Querystring: { from?: string } }>(
    '/sessions/:ref/events',
    { onRequest },
    async (request, reply) => {
      let sessionId: string;
      try {
        sessionId = (await deps.sessions.get(request.params.ref)).id;
      } catch (error) {
        if (error instanceof AppError && error.kind === 'not_found')
          return reply.code(404).send({ error: error.message });
        throw error;
      }
      const header = request.headers['last-event-id'];
      const from = startSeq(Array.isArray(header) ? header[0] : header, request.query.from);
      if (from === null)
        return reply.code(400).send({ error: 'from / Last-Event-ID: must be a whole number (a log seq)' });

      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let sent = from - 1;
      // Each record once and in order: the history first, then live (from another node's session too).
      const unsubscribe = deps.records.follow(sessionId, from, (record) => {
        sent = record.seq;
        raw.write(sseFrame(record));
      });
      raw.write(`: streaming session ${sessionId} from seq ${sent + 1}\n\n`);
      const keepAlive = deps.clock.every(deps.keepAliveMs ?? 15_000, () => raw.write(': keep-alive\n\n'));
      const end = (): void => {
        keepAlive.cancel();
        unsubscribe();
        open.delete(end);
        raw.end();
      };
      open.add(end);
      request.raw.on('close', end);
    },
  );
}

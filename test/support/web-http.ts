import type { Agent, IncomingHttpHeaders } from 'node:http';
import { request } from 'node:http';

/** An HTTP response read whole. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Sends one request to 127.0.0.1:`port` with exactly the given headers (node:http, so Host, Origin and the
 * Sec-Fetch-* headers are what the test says) and reads the whole answer; through `agent` when given (keep-alive).
 */
export function httpCall(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  agent?: Agent,
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers }, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** One Server-Sent Event as received. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** A live SSE connection that collects events; `waitFor(n)` resolves once `n` events have arrived. */
export interface SseClient {
  status: number;
  events: SseEvent[];
  waitFor(count: number): Promise<SseEvent[]>;
  close(): void;
}

/** Opens an SSE stream on 127.0.0.1:`port`; resolves once the response headers arrived. */
export function openSse(port: number, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const waiters: { count: number; resolve: (events: SseEvent[]) => void }[] = [];
    const wake = (): void => {
      for (const w of [...waiters]) {
        if (events.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(events.slice(0, w.count));
        }
      }
    };
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'GET',
        path,
        headers: { host: `127.0.0.1:${port}`, accept: 'text/event-stream', ...headers },
      },
      (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let id: string | undefined;
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('id: ')) id = line.slice(4);
              else if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data.push(line.slice(6));
            }
            if (data.length > 0) events.push({ id, event, data: data.join('\n') });
          }
          wake();
        });
        resolve({
          status: res.statusCode ?? 0,
          events,
          waitFor: (count) =>
            new Promise((done) => {
              waiters.push({ count, resolve: done });
              wake();
            }),
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
    req.end();
  });
}

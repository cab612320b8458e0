// Raw TCP clients for the gateway's slow-request tests: send exactly the bytes given (headers, part of a body, or
// nothing) and report what came back and when the server closed the connection.
import { connect } from 'node:net';

/** What a raw connection saw: the bytes the server sent and how long after connecting it closed (null: still open). */
export interface RawOutcome {
  data: string;
  closedAfterMs: number | null;
}

/**
 * Connects to 127.0.0.1:`port`, writes `chunks` (a string, or strings sent `gapMs` apart) and waits up to `waitMs`
 * for the server to close the connection; then closes it itself.
 */
export function rawExchange(port: number, chunks: string | string[], waitMs: number, gapMs = 0): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    let done = false;
    let sender: NodeJS.Timeout | undefined;
    const finish = (closedAfterMs: number | null): void => {
      if (done) return;
      done = true;
      clearTimeout(giveUp);
      clearInterval(sender);
      socket.destroy();
      resolve({ data, closedAfterMs });
    };
    const giveUp = setTimeout(() => finish(null), waitMs);
    socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    socket.on('close', () => finish(Math.round(performance.now() - started)));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('connect', () => {
      const queue = typeof chunks === 'string' ? [chunks] : [...chunks];
      const next = (): void => {
        const chunk = queue.shift();
        if (chunk === undefined || done) return clearInterval(sender);
        if (chunk.length > 0) socket.write(chunk);
      };
      next();
      if (queue.length > 0) sender = setInterval(next, gapMs);
    });
  });
}

/** The head of a POST with a JSON body of `length` bytes (of which a test sends only part). */
export function postHead(port: number, path: string, length: number, headers: Record<string, string> = {}): string {
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    `Content-Length: ${length}`,
  ];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

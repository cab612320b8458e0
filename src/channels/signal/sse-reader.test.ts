import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SseEvent } from './sse-reader.ts';
import { readSse } from './sse-reader.ts';

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(chunks: string[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(body(chunks))) events.push(event);
  return events;
}

describe('readSse', () => {
  it('reads events split anywhere across chunks, with CRLF, comments, multi-line data and sticky ids', async () => {
    const events = await all([
      ':\n',
      'id:1-1\nevent:rec',
      'eive\ndata:{"a":',
      '1}\n\n: keep-alive\r',
      '\ndata: line one\r\ndata:line two\r\n\r\n',
      'event:receive\ndata:x\n\n',
      'data:cut off at the end',
    ]);
    assert.deepEqual(events, [
      { event: 'receive', data: '{"a":1}', id: '1-1' },
      { event: 'message', data: 'line one\nline two', id: '1-1' },
      { event: 'receive', data: 'x', id: '1-1' },
    ]);
  });

  it('skips blocks without data and keeps multi-byte characters split across chunks', async () => {
    const bytes = new TextEncoder().encode('data:🔐\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('id:7\n\n'));
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const event of readSse(stream)) events.push(event);
    assert.deepEqual(events, [{ event: 'message', data: '🔐', id: '7' }]);
  });
});

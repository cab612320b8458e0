/** One Server-Sent Event. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Parses a text/event-stream body into events (the subset the gateway sends: id, event, data; comments skipped).
 * Expects the response body stream; yields events as they complete.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: { id?: string; event?: string; data: string[] } = { data: [] };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (current.data.length > 0) {
          yield {
            ...(current.id !== undefined ? { id: current.id } : {}),
            event: current.event ?? 'message',
            data: current.data.join('\n'),
          };
        }
        current = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') current.data.push(value);
      else if (field === 'id') current.id = value;
      else if (field === 'event') current.event = value;
    }
  }
}

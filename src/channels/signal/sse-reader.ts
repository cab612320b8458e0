// A small Server-Sent Events reader (the WHATWG event-stream format) over a fetch response body: no dependency, no
// EventSource (which reconnects on its own and hides the stream's end, where the Signal connector needs to decide).
// It yields one event per blank-line-terminated block; comments (`:` keep-alives) are skipped.

/** One event of the stream. */
export interface SseEvent {
  /** The `event:` field, `message` when the block named none. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen on the stream so far (sticky across events, as the format says); undefined before any. */
  id: string | undefined;
}

/**
 * Reads `body` to its end, yielding each complete event. An event cut off by the end of the stream is dropped (the
 * format says so: it was never dispatched). Throws what the body's reader throws (a dropped connection, an abort).
 * `onChunk` is called for every chunk read, keep-alive comments included (a sign of life).
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  options: { onChunk?: () => void } = {},
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let lastId: string | undefined;
  let event = '';
  let data: string[] = [];
  let hasData = false;
  const line = (text: string): SseEvent | null => {
    if (text === '') {
      const done = hasData ? { event: event || 'message', data: data.join('\n'), id: lastId } : null;
      event = '';
      data = [];
      hasData = false;
      return done;
    }
    if (text.startsWith(':')) return null;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') {
      data.push(value);
      hasData = true;
    } else if (field === 'id' && !value.includes('\0')) lastId = value;
    return null;
  };
  for await (const chunk of body) {
    options.onChunk?.();
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const match = /\r\n|\n|\r/.exec(buffer);
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (!match || (match[0] === '\r' && match.index === buffer.length - 1)) break;
      const text = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      const done = line(text);
      if (done) yield done;
    }
  }
}

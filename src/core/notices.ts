// Following a channel of the node's LISTEN connection (cluster/pg-listener.ts) the way every cluster reader does: act on
// each notice at once, and look at everything when the connection comes back and every `pollMs` (a notice lost while
// the connection was down, or never sent, only delays the work).
import type { Clock } from './clock.ts';

/** A LISTEN connection, by shape: handlers per channel (with the notice's payload) and per (re)connect. */
export interface Notices {
  on(channel: string, handler: (payload: string) => void): () => void;
  onConnect(handler: () => void): () => void;
}

/** What to do on a notice of the channel, and on a reconnect or a poll. */
export interface ChannelHandlers {
  notice(payload: string): void;
  all(): void;
}

/**
 * Follows `channel` of `notices`: `handlers.notice` with each payload, `handlers.all` when the connection comes back
 * and every `pollMs` on `clock`. Returns the function that stops all three.
 */
export function followChannel(
  notices: Notices,
  channel: string,
  handlers: ChannelHandlers,
  clock: Clock,
  pollMs: number,
): () => void {
  const off = [notices.on(channel, (payload) => handlers.notice(payload)), notices.onConnect(() => handlers.all())];
  const poll = clock.every(pollMs, () => handlers.all());
  return () => {
    for (const stop of off) stop();
    poll.cancel();
  };
}

import type { ChannelTarget } from '../channels/connector.ts';
import { formatTarget, parseTarget } from '../channels/connector.ts';
import type { StoredSession } from '../store/coding-session-types.ts';

/** Who receives a message: channels streaming the session live, its origin channel, or both (each once). */
export interface Audience {
  foreground: boolean;
  origin: boolean;
  /** The chat a command came from: it already shows the command's reply, so it gets nothing. */
  via?: string;
}

export interface Recipient {
  target: ChannelTarget;
  /** The channel streams the session (it gets the foreground form of a message). */
  streaming: boolean;
}

/** Channels that stream the session live and can be addressed (an unparseable channel string is skipped). */
export function streamingChannels(record: Readonly<StoredSession>): { channel: string; target: ChannelTarget }[] {
  const out: { channel: string; target: ChannelTarget }[] = [];
  for (const [channel, view] of Object.entries(record.foreground)) {
    if (!view.on) continue;
    const target = parseTarget(channel);
    if (target) out.push({ channel, target });
  }
  return out;
}

/**
 * The targets of one message, each conversation once: the streaming channels (when asked for), then the origin unless
 * it already streams (an origin of "unknown" or any unparseable string has no target), minus the command's chat.
 */
export function recipients(record: Readonly<StoredSession>, audience: Audience): Recipient[] {
  const out = new Map<string, Recipient>();
  if (audience.foreground) {
    for (const { target } of streamingChannels(record)) out.set(formatTarget(target), { target, streaming: true });
  }
  if (audience.origin) {
    const origin = parseTarget(record.originChannel);
    if (origin && !out.has(formatTarget(origin))) out.set(formatTarget(origin), { target: origin, streaming: false });
  }
  const commandChat = parseTarget(audience.via);
  if (commandChat) out.delete(formatTarget(commandChat));
  return [...out.values()];
}

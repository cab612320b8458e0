import type { ChannelTarget } from '../channels/connector.ts';
import { formatTarget } from '../channels/connector.ts';

/**
 * The outbox key of the message that opens a coding session's thread in one chat (its first launch line there); every
 * later message of the session to that chat names it as `threadOf`. Only channels with threads use it.
 */
export function sessionThreadKey(sessionId: string, target: ChannelTarget): string {
  return `thread-${sessionId}-${formatTarget(target)}`;
}

// Handing one inbound message to the daemon's handler, the way every connector does it: retried with backoff while
// the handler fails, abandoned when the connector stops, given up after `maxAttempts` (the connector then tells the
// sender it could not be accepted, and acknowledges the message so one poisoned message cannot block the chat).
import type { Clock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { InboundHandler, InboundMessage } from './connector.ts';
import type { StopSignal } from './stop-signal.ts';

/** How a hand-off ended: durably accepted, given up (tell the sender), or cut off by the connector stopping. */
export type HandOff = 'accepted' | 'given-up' | 'stopped';

/** What a hand-off needs from its connector. */
export interface HandOffDeps {
  clock: Clock;
  logger: Logger;
  /** Attempts before giving up. */
  maxAttempts: number;
  /** The connector's current stop signal (a hand-off in flight is abandoned when it fires). */
  stopSignal: () => StopSignal;
  /** How long to wait before attempt `attempt + 1`. */
  retryDelay: (attempt: number) => number;
}

/** Hands `inbound` to `onMessage`, retrying with backoff up to `deps.maxAttempts`; resolves with how it ended. */
export async function handOff(inbound: InboundMessage, onMessage: InboundHandler, deps: HandOffDeps): Promise<HandOff> {
  const { clock, logger } = deps;
  for (let attempt = 1; ; attempt += 1) {
    const stop = deps.stopSignal();
    try {
      return (await stop.race(onMessage(inbound))).stopped ? 'stopped' : 'accepted';
    } catch (error) {
      if (stop.stopped) return 'stopped';
      const err = errorMessage(error);
      if (attempt >= deps.maxAttempts) {
        logger.error(
          { messageId: inbound.id, attempts: attempt, err },
          'inbound message could not be accepted; the sender was told',
        );
        return 'given-up';
      }
      logger.warn({ messageId: inbound.id, attempt, err }, 'inbound message not accepted yet; retrying');
      if (!(await stop.sleep(clock, deps.retryDelay(attempt)))) return 'stopped';
    }
  }
}

// Where a wake goes: the engine session that launched the coding session, else the most recent foreground user
// session, else the heartbeat session; and when even that does not exist yet, a heartbeat run made now that carries
// the text (creating the heartbeat session). Null only when none of these could take it.
import type { WakeVia } from '../../store/wake-events.ts';
import type { EngineApi } from '../api.ts';
import type { Heartbeat } from '../scheduler/heartbeat.ts';

/** Where a wake was accepted. */
export interface WakeDelivery {
  sessionId: string;
  messageId: string;
  via: WakeVia;
  duplicate: boolean;
}

export interface RouteWakeDeps {
  engine: Pick<EngineApi, 'postSystemMessage'>;
  /** The last resort: a heartbeat run made now with the text in its prompt. Without it, such wakes are undelivered. */
  heartbeat?: Pick<Heartbeat, 'runNow'>;
}

/** A wake to deliver. `origin` is the system-message origin (`wake`, `hook`); `messageId` makes retries idempotent. */
export interface WakeMessage {
  text: string;
  origin: 'wake' | 'hook';
  originSessionId: string | null;
  messageId: string;
  at: number;
}

/**
 * Delivers a wake along the route above. Resolves to where it went, or null when nothing could take it; rejects
 * when the engine failed (the caller keeps the event and tries again).
 */
export async function routeWake(deps: RouteWakeDeps, wake: WakeMessage): Promise<WakeDelivery | null> {
  const { engine } = deps;
  const options = { messageId: wake.messageId };
  const attempts: { via: WakeVia; route: Parameters<EngineApi['postSystemMessage']>[0] }[] = [];
  if (wake.originSessionId) attempts.push({ via: 'origin', route: { sessionId: wake.originSessionId } });
  attempts.push({ via: 'most-recent-foreground', route: { strategies: ['most-recent-foreground'] } });
  attempts.push({ via: 'heartbeat', route: { strategies: ['heartbeat'] } });
  for (const { via, route } of attempts) {
    const accepted = await engine.postSystemMessage(route, wake.text, wake.origin, options);
    if (accepted)
      return { sessionId: accepted.sessionId, messageId: accepted.messageId, via, duplicate: accepted.duplicate };
  }
  if (!deps.heartbeat) return null;
  // The run carries the wake's message id: a retry after a crash that finds the heartbeat session is a duplicate.
  const run = await deps.heartbeat.runNow(
    wake.origin,
    [{ text: wake.text, source: wake.origin, at: wake.at }],
    options,
  );
  return { sessionId: run.sessionId, messageId: run.messageId, via: 'heartbeat-run', duplicate: run.duplicate };
}

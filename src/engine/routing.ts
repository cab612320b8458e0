// Session resolution: the seed's two fetch strategies and MessageRoute.
import type { MessageRoute, SessionFetchStrategy } from './api.ts';
import type { EngineSession } from './session.ts';

/** The user session with the latest activity from its person (creation time when it has none); `exclude` is skipped. */
export function mostRecentForeground(sessions: Iterable<EngineSession>, exclude?: string): EngineSession | null {
  let best: EngineSession | null = null;
  let bestAt = -Infinity;
  for (const s of sessions) {
    if (s.descriptor.type !== 'user' || s.id === exclude) continue;
    const at = s.lastUserAt ?? s.createdAt;
    if (at > bestAt) {
      best = s;
      bestAt = at;
    }
  }
  return best;
}

/** The most recently active heartbeat session (there is one per daemon: its key is a singleton). */
export function heartbeatSession(sessions: Iterable<EngineSession>): EngineSession | null {
  let best: EngineSession | null = null;
  for (const s of sessions) if (s.descriptor.type === 'heartbeat' && (!best || s.updatedAt > best.updatedAt)) best = s;
  return best;
}

/** Applies one strategy. */
export function fetchSession(sessions: Iterable<EngineSession>, strategy: SessionFetchStrategy): EngineSession | null {
  return strategy === 'heartbeat' ? heartbeatSession(sessions) : mostRecentForeground(sessions);
}

/** Resolves a route: the session by id, or the first session one of the strategies finds (in order); null if none. */
export function resolveRoute(sessions: Map<string, EngineSession>, route: MessageRoute): EngineSession | null {
  if ('sessionId' in route) return sessions.get(route.sessionId) ?? null;
  for (const strategy of route.strategies) {
    const found = fetchSession(sessions.values(), strategy);
    if (found) return found;
  }
  return null;
}

/** The channel a session serves: its own (user) or its nearest user ancestor's (subagent). */
export function servedChannel(sessions: Map<string, EngineSession>, session: EngineSession): string | undefined {
  let current: EngineSession | undefined = session;
  for (let depth = 0; current && depth < 64; depth += 1) {
    const d: EngineSession['descriptor'] = current.descriptor;
    if (d.type === 'user') return d.channelId;
    if (d.type !== 'subagent') return undefined;
    current = sessions.get(d.parentSessionId);
  }
  return undefined;
}

// Shared pieces of the engine operations (agents, agent-start, agent-send).
import type { EngineSessionSummary } from '../engine/api.ts';
import type { Caller } from './operation.ts';

/** The origin a system message from this caller carries: `rpc`, `cli`, `chat:<channel>` or `session:<id>`. */
export function callerOrigin(caller: Caller): string {
  switch (caller.kind) {
    case 'agent':
      return `session:${caller.sessionId}`;
    case 'chat':
      return `chat:${caller.channel}`;
    case 'rpc':
    case 'cli':
      return caller.kind;
    default: {
      const never: never = caller;
      throw new Error(`unknown caller ${JSON.stringify(never)}`);
    }
  }
}

/** The chat a session serves: its own (user) or its nearest user ancestor's (subagent); undefined for background ones. */
export function servedChat(session: EngineSessionSummary, byId: Map<string, EngineSessionSummary>): string | undefined {
  let current: EngineSessionSummary | undefined = session;
  for (let depth = 0; current && depth < 64; depth += 1) {
    const d: EngineSessionSummary['descriptor'] = current.descriptor;
    if (d.type === 'user') return d.channelId;
    if (d.type !== 'subagent') return undefined;
    current = byId.get(d.parentSessionId);
  }
  return undefined;
}

/**
 * The sessions a caller may see: everything for RPC, CLI and callers without a chat; for a chat user or an agent
 * serving a chat, the sessions of that chat and the background ones, never another chat's.
 */
export function visibleTo(caller: Caller, sessions: EngineSessionSummary[]): EngineSessionSummary[] {
  const channel = caller.kind === 'chat' || caller.kind === 'agent' ? caller.channel : undefined;
  if (!channel) return sessions;
  const byId = new Map(sessions.map((s) => [s.id, s]));
  return sessions.filter((s) => {
    const served = servedChat(s, byId);
    return served === undefined || served === channel;
  });
}

// What a dispatch's coding sessions wrote: the text of a session, and the output of the current attempt's worker (the
// auditor's input and the done summary's). A session record that cannot be read counts as no output.
import type { SessionManager } from '../../coding/session-manager.ts';
import type { StoredSession } from '../../store/coding-session-types.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { PhaseDeps } from './phase-deps.ts';

/** Every text block a session wrote, joined. */
export function sessionOutput(sessions: Pick<SessionManager, 'outputBlocks'>, record: StoredSession | null): string {
  if (!record) return '';
  return sessions
    .outputBlocks(record)
    .map((b) => b.text)
    .join('\n\n');
}

/** The session's stored record; null when it cannot be read. */
export async function storedSession(
  sessions: Pick<SessionManager, 'get'>,
  sessionId: string,
): Promise<StoredSession | null> {
  try {
    return await sessions.get(sessionId);
  } catch {
    return null;
  }
}

/** The output of the newest worker session of the dispatch's current attempt. */
export async function lastWorkerOutput(p: Pick<PhaseDeps, 'store' | 'sessions'>, d: DispatchRecord): Promise<string> {
  const worker = (await p.store.sessions(d.id)).filter((s) => s.phase === 'worker' && s.attempt === d.attempt).at(-1);
  return worker ? sessionOutput(p.sessions, await storedSession(p.sessions, worker.sessionId)) : '';
}

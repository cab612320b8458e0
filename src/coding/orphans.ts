import { readFileSync } from 'node:fs';
import { SESSION_ENV_TAG } from './agent-process.ts';

/** An agent process of a session that outlived the daemon that started it, found (and stopped) at the next start. */
export interface Orphan {
  sessionId: string;
  name: string;
  pid: number;
}

/**
 * Stops an agent process left behind by a daemon that died, but only if `/proc/<pid>/environ` shows it was started
 * for `sessionId` (so a recycled pid is never touched). SIGTERM goes to its process group (the agent and its tools),
 * else to the process. Returns true when a signal was sent. Linux only; elsewhere false.
 */
export function stopOrphan(pid: number, sessionId: string): boolean {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return false;
  }
  if (!environ.split('\0').includes(`${SESSION_ENV_TAG}=${sessionId}`)) return false;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGTERM');
      return true;
    } catch {
      // Not a group leader (started before agents got their own group): try the process itself.
    }
  }
  return false;
}

/**
 * At startup, for the sessions the last daemon left active: stops every agent process of theirs that is still running
 * and returns them (what remained of the last daemon; empty when its agents ended with it).
 */
export function sweepOrphans(sessions: readonly { id: string; name: string; pid: number | null }[]): Orphan[] {
  const remained: Orphan[] = [];
  for (const s of sessions) {
    if (s.pid !== null && stopOrphan(s.pid, s.id)) remained.push({ sessionId: s.id, name: s.name, pid: s.pid });
  }
  return remained;
}

/** The startup report line: which agent processes outlived the last daemon (and were stopped now), or that none did. */
export function orphanReport(remained: readonly Orphan[], cutSessions: number): string {
  if (remained.length === 0)
    return `no agent process outlived the last daemon (${cutSessions} session(s) were cut off)`;
  const list = remained.map((o) => `${o.name} (pid ${o.pid})`).join(', ');
  return `${remained.length} agent process(es) outlived the last daemon and were stopped now: ${list}`;
}

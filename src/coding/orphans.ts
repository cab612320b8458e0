import { readFileSync } from 'node:fs';
import { SESSION_ENV_TAG } from './agent-process.ts';

/**
 * Stops an agent process left behind by a daemon that died, but only if `/proc/<pid>/environ` shows it was started
 * for `sessionId` (so a recycled pid is never touched). Returns true when a signal was sent. Linux only; elsewhere false.
 */
export function stopOrphan(pid: number, sessionId: string): boolean {
  let environ: string;
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return false;
  }
  if (!environ.split('\0').includes(`${SESSION_ENV_TAG}=${sessionId}`)) return false;
  try {
    process.kill(pid, 'SIGTERM');
    return true;
  } catch {
    return false;
  }
}

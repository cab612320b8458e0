import { closeSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { conflict } from '../core/errors.ts';
import { openPrivate, writePrivateFile } from '../core/private-files.ts';

/** What `<home>/daemon.json` says about the running daemon. */
export interface DaemonInfo {
  pid: number;
  startedAt: number;
  version: string;
  url?: string;
  port?: number;
}

/** Path of the daemon file under a state directory. */
export function daemonFile(home: string): string {
  return join(home, 'daemon.json');
}

/** Reads `<home>/daemon.json`; undefined when missing or unreadable. */
export function readDaemonInfo(home: string): DaemonInfo | undefined {
  try {
    return JSON.parse(readFileSync(daemonFile(home), 'utf8')) as DaemonInfo;
  } catch {
    return undefined;
  }
}

/** True when a process with this pid exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims the state directory for this process by creating `daemon.json` exclusively. A file left by a dead
 * process is taken over; one held by a live daemon makes this throw a conflict naming its pid and URL.
 */
export function acquireDaemonLock(home: string, info: DaemonInfo): void {
  const path = daemonFile(home);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openPrivate(path, 'wx');
      writeSync(fd, JSON.stringify(info));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const existing = readDaemonInfo(home);
      if (existing && existing.pid !== process.pid && processAlive(existing.pid)) {
        throw conflict(
          `a switchboard daemon is already running for ${home} (pid ${existing.pid}${existing.url ? `, ${existing.url}` : ''})`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw conflict(`could not claim ${path}`);
}

/** Rewrites `daemon.json` atomically (tmp file + rename), 0600. */
export function updateDaemonInfo(home: string, info: DaemonInfo): void {
  const tmp = `${daemonFile(home)}.tmp`;
  writePrivateFile(tmp, JSON.stringify(info));
  renameSync(tmp, daemonFile(home));
}

/** Removes `daemon.json` if it still belongs to this process. */
export function releaseDaemonLock(home: string): void {
  if (readDaemonInfo(home)?.pid === process.pid) rmSync(daemonFile(home), { force: true });
}

// Files and folders only their owner may read: every file the daemon creates is 0600 and every folder 0700, whatever
// the process umask (the mode is given at creation, and set again with chmod when the umask changed it or the file was
// already there with a wider one). Everything the daemon writes under its state directory, or into a dispatch's
// artifact folder, is created through here.
import type { OpenMode } from 'node:fs';
import { chmodSync, closeSync, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** Mode of every file the daemon creates: read and write for the owner only. */
export const PRIVATE_FILE_MODE = 0o600;
/** Mode of every folder the daemon creates: the owner only. */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates whichever of `dir` and its parents are missing, each 0700 whatever the umask; folders that already existed
 * are left as they are. Returns true when `dir` itself was created.
 */
export function makePrivateDirs(dir: string): boolean {
  const target = resolve(dir);
  const first = mkdirSync(target, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return false;
  // The umask may have taken bits off the folders just made: give each, from `dir` up to `first`, its full mode.
  const top = resolve(first);
  for (let path = target; ; path = dirname(path)) {
    chmodSync(path, PRIVATE_DIR_MODE);
    if (path === top || dirname(path) === path) break;
  }
  return true;
}

/** Like `makePrivateDirs`, and a `dir` that already existed with another mode is made 0700: a folder the daemon owns. */
export function ensurePrivateDir(dir: string): void {
  if (!makePrivateDirs(dir)) enforceMode(dir, PRIVATE_DIR_MODE);
}

/**
 * Opens `path` with `flags` (Node's `openSync` flags), creating it with exactly `mode` (default 0600) whatever the
 * umask; a file that already existed with another mode gets `mode`. Returns the file descriptor.
 */
export function openPrivate(path: string, flags: OpenMode, mode: number = PRIVATE_FILE_MODE): number {
  const fd = openSync(path, flags, mode);
  try {
    if ((fstatSync(fd).mode & 0o777) !== mode) fchmodSync(fd, mode);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/** The promise version of `openPrivate`: resolves to a FileHandle of a file whose mode is exactly `mode`. */
export async function openPrivateAsync(
  path: string,
  flags: OpenMode,
  mode: number = PRIVATE_FILE_MODE,
): Promise<FileHandle> {
  const handle = await open(path, flags, mode);
  try {
    if (((await handle.stat()).mode & 0o777) !== mode) await handle.chmod(mode);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/**
 * Replaces the content of `path` with `data` (creating it), leaving it with exactly `mode` (default 0600). Not atomic:
 * see writeFileAtomic for that.
 */
export function writePrivateFile(path: string, data: string, mode: number = PRIVATE_FILE_MODE): void {
  const fd = openPrivate(path, 'w', mode);
  try {
    const bytes = Buffer.from(data, 'utf8');
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
  } finally {
    closeSync(fd);
  }
}

/** Makes sure `path` exists as a 0600 file (an empty one when it was missing), without touching its content. */
export function touchPrivateFile(path: string): void {
  closeSync(openPrivate(path, 'a'));
}

/**
 * Gives an existing file or folder `mode` when it has any other; symbolic links are left alone. Returns true when it
 * changed something, false when the mode was right already or nothing is at `path`.
 */
export function enforceMode(path: string, mode: number): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink() || (stat.mode & 0o777) === mode) return false;
  chmodSync(path, mode);
  return true;
}

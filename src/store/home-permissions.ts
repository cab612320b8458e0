// What the daemon keeps in its state directory, and the start-up pass that makes it owner-only: a home the user made
// first (to write config.json5 into) or one written by an older version may be 0755 with 0644 files in it.
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { enforceMode, makePrivateDirs, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../core/private-files.ts';

/** Files the daemon writes at the top of its state directory. config.json5 is the user's and is not among them. */
export const HOME_FILES: readonly string[] = [
  'state.db',
  'state.db-wal',
  'state.db-shm',
  'state.db-journal',
  'daemon.json',
  'daemon.json.tmp',
  'gateway.token',
  'hooks.token',
  'web.token',
];

/** Folders the daemon keeps in its state directory; everything inside them is the daemon's. */
export const HOME_FOLDERS: readonly string[] = ['logs', 'engine'];

/**
 * Creates the state directory 0700, or makes an existing one 0700, and gives the daemon's files in it 0600 and its
 * folders (and everything inside them) 0700/0600. A home that is a symbolic link is followed; links inside it are left
 * alone. Returns the paths it changed, relative to the home ("." for the home itself), so the caller can say what was
 * tightened.
 */
export function secureHome(homePath: string): string[] {
  makePrivateDirs(homePath);
  const home = realpathSync(homePath);
  const changed: string[] = [];
  const apply = (path: string, mode: number): void => {
    if (enforceMode(path, mode)) changed.push(relative(home, path) || '.');
  };
  apply(home, PRIVATE_DIR_MODE);
  for (const name of HOME_FILES) apply(join(home, name), PRIVATE_FILE_MODE);
  for (const name of HOME_FOLDERS) {
    const folder = join(home, name);
    if (!lstatSync(folder, { throwIfNoEntry: false })?.isDirectory()) continue;
    apply(folder, PRIVATE_DIR_MODE);
    for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name);
      if (entry.isDirectory()) apply(path, PRIVATE_DIR_MODE);
      else if (entry.isFile()) apply(path, PRIVATE_FILE_MODE);
    }
  }
  return changed;
}

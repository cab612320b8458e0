// Every file and folder under a directory with its permission bits, for the tests that check the daemon's are
// owner-only.
import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One entry under the root: its path relative to the root ("." for the root), kind and mode (octal text). */
export interface ModeEntry {
  path: string;
  kind: 'folder' | 'file' | 'other';
  mode: string;
}

/** The root and everything under it (symbolic links not followed), sorted by path. */
export function modesUnder(root: string): ModeEntry[] {
  const entry = (path: string): ModeEntry => {
    const stat = lstatSync(path);
    const kind = stat.isDirectory() ? 'folder' : stat.isFile() ? 'file' : 'other';
    return { path: relative(root, path) || '.', kind, mode: (stat.mode & 0o777).toString(8) };
  };
  const all = [
    entry(root),
    ...readdirSync(root, { recursive: true, withFileTypes: true }).map((d) => entry(join(d.parentPath, d.name))),
  ];
  return all.sort((a, b) => a.path.localeCompare(b.path));
}

/** The entries that are not owner-only: folders other than 0700, files other than 0600. */
export function notOwnerOnly(entries: readonly ModeEntry[]): ModeEntry[] {
  return entries.filter((e) => (e.kind === 'folder' && e.mode !== '700') || (e.kind === 'file' && e.mode !== '600'));
}

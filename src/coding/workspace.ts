import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { expandHome } from '../core/config-load.ts';
import { invalidInput } from '../core/errors.ts';

/** The real path of `path` (symlinks resolved) when it exists, else `path` resolved. */
export function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** True when `child` is `root` or lies inside it (both already absolute, symlinks resolved). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * A requested working directory as an absolute path (`~` expanded). A relative one is refused (invalid_input naming
 * `field`): it would be relative to the daemon's own working directory, which whoever asked (over RPC, the web page or
 * a chat) does not know; the CLI sends its relative paths resolved where the command was typed.
 */
export function absoluteWorkdir(requested: string, field = 'workdir'): string {
  const expanded = expandHome(requested);
  if (!isAbsolute(expanded)) {
    throw invalidInput(
      `${field}: ${requested} is a relative path; give an absolute path (or one starting with ~/)`,
      field,
    );
  }
  return resolve(expanded);
}

/**
 * Resolves a requested working directory and checks it: it must be absolute, exist, be a directory and lie (after resolving
 * symlinks) under one of the workspace roots. Returns the real path; throws invalid_input naming `field` otherwise.
 */
export function checkWorkdir(requested: string, workspaces: readonly string[], field = 'workdir'): string {
  const real = realOrResolved(absoluteWorkdir(requested, field));
  let isDir: boolean;
  try {
    isDir = statSync(real).isDirectory();
  } catch {
    throw invalidInput(`${field}: ${requested} does not exist`, field);
  }
  if (!isDir) throw invalidInput(`${field}: ${requested} is not a directory`, field);
  const roots = workspaces.map(realOrResolved);
  if (!roots.some((root) => isInside(root, real))) {
    throw invalidInput(
      `${field}: ${real} is outside the configured workspaces (${roots.join(', ')}); add a root to "workspaces" in the config to allow it`,
      field,
    );
  }
  return real;
}

/**
 * The workspace root a working directory belongs to: the longest of `workspaces` (resolved) that contains it, else the
 * directory itself. "Always" approval rules are stored for this root.
 */
export function workspaceRoot(workdir: string, workspaces: readonly string[]): string {
  const roots = workspaces.map((root) => realOrResolved(resolve(expandHome(root))));
  return roots.filter((root) => isInside(root, workdir)).sort((a, b) => b.length - a.length)[0] ?? workdir;
}

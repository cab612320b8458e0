import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';

/**
 * Makes a fresh temp directory; returns its path and a remover. The remover retries for about a second when a file
 * appears while it empties a folder (ENOTEMPTY): an agent process of a killed daemon may still write its last files
 * there while the orphan guard ends it.
 */
export function tempDir(prefix = 'sb-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

/**
 * For each test of the enclosing describe: a fresh temp directory, removed after the test, and — with `umask` — the
 * process umask set to it before the test and put back after (the test may change it meanwhile). `path` is the current
 * test's directory.
 */
export function tempDirPerTest(options: { prefix?: string; umask?: number } = {}): { readonly path: string } {
  let dir: { path: string; remove: () => void } | undefined;
  let umask: number | undefined;
  beforeEach(() => {
    dir = tempDir(options.prefix);
    if (options.umask !== undefined) umask = process.umask(options.umask);
  });
  afterEach(() => {
    if (umask !== undefined) process.umask(umask);
    umask = undefined;
    dir?.remove();
    dir = undefined;
  });
  return {
    get path(): string {
      if (!dir) throw new Error('tempDirPerTest: the directory exists only while a test runs');
      return dir.path;
    },
  };
}

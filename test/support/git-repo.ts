// Real git repositories for tests: a repo with one commit, optionally with an `origin` whose default branch moved on.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** Runs git synchronously (test setup only); returns trimmed stdout. */
export function gitSync(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' }).trim();
}

/** Creates a git repository at `path` with a first commit on `main`; returns the path. */
export function initRepo(path: string): string {
  mkdirSync(path, { recursive: true });
  gitSync(path, 'init', '-q', '-b', 'main');
  writeFileSync(join(path, 'README.md'), '# test repo\n');
  gitSync(path, 'add', 'README.md');
  gitSync(path, 'commit', '-q', '-m', 'first');
  return path;
}

/** Commits a file in `repo`; returns the new commit id. */
export function commitFile(repo: string, name: string, content: string): string {
  writeFileSync(join(repo, name), content);
  gitSync(repo, 'add', name);
  gitSync(repo, 'commit', '-q', '-m', `add ${name}`);
  return gitSync(repo, 'rev-parse', 'HEAD');
}

/**
 * Makes `remote` a bare repository (branch `main`) and the `origin` of `repo`, with `repo`'s `main` pushed to it: a
 * local stand-in for a hosted remote. Returns the remote's path.
 */
export function addBareOrigin(repo: string, remote: string): string {
  gitSync(dirname(remote), 'init', '-q', '--bare', '-b', 'main', remote);
  gitSync(repo, 'remote', 'add', 'origin', remote);
  gitSync(repo, 'push', '-q', 'origin', 'main');
  return remote;
}

// Git for pull requests: always an argument array (never a shell), never interactive (`GIT_TERMINAL_PROMPT=0`), and
// credentials only in the child's environment (`GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_0` / `GIT_CONFIG_VALUE_0`, an
// `http.<origin>/.extraheader`), so a token reaches neither argv, nor a log line, nor the repository's config.
import { execFile } from 'node:child_process';

/** What a git command did. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Environment variables for one git child (added over the daemon's own). */
export type GitEnv = Record<string, string>;

/** How git is run; tests pass a recorder to see every argv and environment. */
export type GitRunner = (cwd: string, args: readonly string[], env?: GitEnv) => Promise<GitResult>;

/** Variables that would make git read another repository's or the daemon's own git config instead of `cwd`'s. */
const DROPPED = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT'];

/** The environment of a git child: the daemon's, without repository overrides, non-interactive, plus `extra`. */
export function gitEnvironment(extra: GitEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of DROPPED) delete env[key];
  for (const key of Object.keys(env)) if (/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(key)) delete env[key];
  return { ...env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', SSH_ASKPASS: '', LC_ALL: 'C', ...extra };
}

/** Runs `git <args>` in `cwd` (execFile: no shell); resolves its exit code and output, never rejects on a non-zero exit. */
export const runGit: GitRunner = (cwd, args, env) =>
  new Promise((resolve, reject) => {
    execFile(
      'git',
      [...args],
      { cwd, env: gitEnvironment(env), maxBuffer: 16 * 1024 * 1024, timeout: 120_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(new Error(`git ${args[0] ?? ''} could not run: ${error.message}`));
          return;
        }
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });

/**
 * The environment that gives git `token` for an http(s) remote: an `AUTHORIZATION: basic` extra header for that
 * origin, as config entries of the child's environment only. Empty for other remotes (ssh keys, local paths).
 */
export function credentialEnv(remoteUrl: string, token: string): GitEnv {
  let url: URL;
  try {
    url = new URL(remoteUrl);
  } catch {
    return {};
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return {};
  const basic = Buffer.from(`x-access-token:${token}`, 'utf8').toString('base64');
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: `http.${url.origin}/.extraheader`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
  };
}

/** An identity for commits when the repository and the user's config name none (else git refuses to commit). */
export const FALLBACK_IDENTITY: GitEnv = {
  GIT_AUTHOR_NAME: 'switchboard',
  GIT_AUTHOR_EMAIL: 'switchboard@localhost',
  GIT_COMMITTER_NAME: 'switchboard',
  GIT_COMMITTER_EMAIL: 'switchboard@localhost',
};

/** Whether a failed push's stderr says the remote has commits the pushed branch lacks. */
export function isNonFastForward(stderr: string): boolean {
  return /non-fast-forward|\(fetch first\)|\[rejected\]|updates were rejected/i.test(stderr);
}

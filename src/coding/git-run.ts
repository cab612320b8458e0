// Running git for the daemon's own reads of a session's working directory: an argument array (never a shell), no
// pager, no optional locks, no colour, repository settings that would run a program (fsmonitor) turned off, a timeout
// and a cap on how much output is kept.
import { spawn } from 'node:child_process';

/** What one git call answered: its exit code, its output (cut at `maxBytes`) and whether it was cut. */
export interface GitOutput {
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when stdout was longer than `maxBytes` (git was stopped once it was). */
  truncated: boolean;
}

/** How one git call runs. */
export interface GitCallOptions {
  /** Extra environment (e.g. GIT_INDEX_FILE for a temporary index). */
  env?: Record<string, string>;
  /** Written to git's stdin, then closed (no stdin otherwise). */
  input?: string;
  /** Keep at most this many bytes of stdout (default 8 MiB); the rest is cut and `truncated` set. */
  maxBytes?: number;
  /** Stop git after this long (default 30 s): the call then rejects. */
  timeoutMs?: number;
}

const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_STDERR = 16 * 1024;

/** The options every call starts with: paths as they are (no octal quoting), no fsmonitor hook, no pager. */
const BASE_ARGS = ['--no-pager', '-c', 'core.quotepath=off', '-c', 'core.fsmonitor=false', '-c', 'color.ui=false'];

/** Thrown when git could not be run at all or ran past its timeout. */
export class GitFailure extends Error {
  override name = 'GitFailure';
}

/**
 * Runs `git <args>` in `cwd` and resolves with its output whatever the exit code (callers read `code`). Rejects with a
 * GitFailure when git is missing or exceeds its timeout. Never touches a terminal: prompts and pagers are off.
 */
export function runGit(cwd: string, args: readonly string[], options: GitCallOptions = {}): Promise<GitOutput> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise<GitOutput>((resolve, reject) => {
    const child = spawn('git', [...BASE_ARGS, ...args], {
      cwd,
      env: {
        ...process.env,
        GIT_OPTIONAL_LOCKS: '0',
        GIT_TERMINAL_PROMPT: '0',
        GIT_PAGER: 'cat',
        PAGER: 'cat',
        LC_ALL: 'C',
        ...options.env,
      },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let truncated = false;
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      if (truncated) return;
      const room = maxBytes - outBytes;
      if (chunk.length > room) {
        out.push(chunk.subarray(0, room));
        outBytes = maxBytes;
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString('utf8').slice(0, MAX_STDERR - stderr.length);
    });
    if (options.input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // git may exit before reading all of it; its exit code tells.
      child.stdin.end(options.input);
    }
    child.on('error', (error) => reject(new GitFailure(`git could not be run: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (signal && !truncated) {
        reject(new GitFailure(`git ${args[0] ?? ''} was stopped (${signal}): it ran past its time limit`));
        return;
      }
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: stderr.trim(), truncated });
    });
  });
}

/**
 * The commit `HEAD` of the repository at `workdir` points to, or null when `workdir` is not in a git repository, the
 * repository has no commits yet, or git is not installed. Used to record a session's base when it is launched.
 */
export async function headCommit(workdir: string): Promise<string | null> {
  try {
    const result = await runGit(workdir, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
      maxBytes: 4096,
      timeoutMs: 10_000,
    });
    const id = result.stdout.trim();
    return result.code === 0 && /^[0-9a-f]{40,64}$/.test(id) ? id : null;
  } catch {
    // No git on this machine (or it hung): the session simply has no recorded base.
    return null;
  }
}

// The `check()` every harness offers: find the agent executable, run `<executable> --version`, report what happened.
import { execFile } from 'node:child_process';
import { errorMessage } from '../core/errors.ts';
import { invocationFor } from './executables.ts';
import type { HarnessCheck } from './harness.ts';

const VERSION_TIMEOUT_MS = 15_000;

/** The last `count` non-blank lines of `text`, each trimmed, joined with " | " ('' when there are none). */
export function lastLines(text: string, count = 3): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-count)
    .join(' | ');
}

/**
 * Runs `<executable> --version` (a JS entry point through this Node) in `env` with a 15 s timeout. Resolves to the first
 * line of its output ('' when it printed nothing); rejects with the first line of the failure and the tail of its stderr.
 */
export function versionOf(executable: string, env: Record<string, string | undefined>): Promise<string> {
  const { command, argsPrefix } = invocationFor(executable);
  return new Promise((resolve, reject) => {
    execFile(command, [...argsPrefix, '--version'], { timeout: VERSION_TIMEOUT_MS, env }, (error, stdout, stderr) => {
      const tail = lastLines(String(stderr));
      if (error) reject(new Error(`${error.message.split('\n')[0]}${tail ? `: ${tail}` : ''}`));
      else resolve(String(stdout).trim().split('\n')[0] ?? '');
    });
  });
}

/** What a harness reports when it found no executable: what it looked for, and how to fix it. */
export interface MissingExecutable {
  executable: string;
  problem: string;
}

/**
 * A harness check of `executable` (undefined: none was found, and `missing` is the report): ok with the version it
 * prints (no `version` when it printed nothing), or not ok with the `--version` failure as the problem.
 */
export async function checkExecutable(
  executable: string | undefined,
  env: Record<string, string | undefined>,
  missing: MissingExecutable,
): Promise<HarnessCheck> {
  if (!executable) return { ok: false, ...missing };
  try {
    const version = await versionOf(executable, env);
    return version ? { ok: true, executable, version } : { ok: true, executable };
  } catch (error) {
    return { ok: false, executable, problem: `\`${executable} --version\` failed: ${errorMessage(error)}` };
  }
}

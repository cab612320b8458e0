// The bare platform's figure for launches: this process spawning the fake Claude Code CLI directly with piped stdio and
// reading its lines until every one has exited — what a launch costs without switchboard in the way.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The fake Claude Code CLI the launch benches run. */
export const FAKE_CLAUDE = fileURLToPath(new URL('../../test/support/fake-claude.mjs', import.meta.url));

/**
 * Spawns the fake `count` times in `cwd` (at most `parallel` at once; default all at once), reads every stdout line and
 * waits for every exit. Resolves with the milliseconds it took; throws when the fakes printed nothing.
 */
export async function bareRelay(cwd: string, count: number, parallel = count): Promise<number> {
  const start = performance.now();
  let lines = 0;
  let next = 0;
  const one = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [FAKE_CLAUDE, '-p', 'hello', '--output-format', 'stream-json', '--verbose'],
        {
          cwd,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      child.stderr.resume();
      createInterface({ input: child.stdout }).on('line', () => (lines += 1));
      child.once('error', reject);
      child.once('close', () => resolve());
    });
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        next += 1;
        await one();
      }
    }),
  );
  if (lines === 0) throw new Error('the fakes printed nothing');
  return performance.now() - start;
}

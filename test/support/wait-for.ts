// The one polling helper of the tests: for what has no idle() to await (another process, a mock server, a state a
// background component reaches on its own). Components with a WorkLoop are awaited with their idle() instead.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Calls `check` every `intervalMs` (real time) until it returns something other than undefined or false, and returns
 * that; a throw counts as "not yet". Rejects naming `what` (and the last error) after `timeoutMs`.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(intervalMs);
  }
}

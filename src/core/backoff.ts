/**
 * Delay before retry number `attempt` (1 = the first retry): exponential from `baseMs`, capped at `maxMs`, with "equal
 * jitter" (a random point in the upper half of the exponential step), so many failing senders do not retry in lockstep.
 * `random` returns a number in [0, 1). Returns whole milliseconds, at least 1.
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attempt - 1);
  const step = Math.min(maxMs, baseMs * 2 ** Math.min(exponent, 52));
  return Math.max(1, Math.round(step / 2 + random() * (step / 2)));
}

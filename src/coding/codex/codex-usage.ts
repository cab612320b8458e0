// Per-turn token usage from Codex's cumulative counts. `turn.completed.usage` in `codex exec --json` holds the totals of
// the whole thread (a resumed thread reported 300 input tokens after turns of 200 and 100), so a turn's usage is the
// difference between its totals and the previous turn's. A run keeps one tracker across its turns (one process each).
import { z } from 'zod';
import type { Usage } from '../harness.ts';

const count = z.number().int().nonnegative();

/** The `usage` object of a `turn.completed` line. */
export const usageTotalsSchema = z.object({
  input_tokens: count,
  cached_input_tokens: count.optional(),
  cache_write_input_tokens: count.optional(),
  output_tokens: count,
  reasoning_output_tokens: count.optional(),
});

export type CodexUsageTotals = z.infer<typeof usageTotalsSchema>;

interface Totals {
  input: number;
  cached: number;
  output: number;
}

function totalsOf(usage: CodexUsageTotals): Totals {
  return { input: usage.input_tokens, cached: usage.cached_input_tokens ?? 0, output: usage.output_tokens };
}

/**
 * Remembers the thread's last cumulative totals. A new thread starts from zero (`known: true`); a thread resumed from a
 * backend id whose earlier totals this run never saw starts unknown (`known: false`): its first turn reports no usage
 * rather than the whole thread's, and later turns report deltas. Input or output totals that go down (a thread Codex reset)
 * are taken as the turn's own usage; a cached count that goes down counts as 0.
 */
export class CodexUsageTracker {
  #last: Totals | null;

  constructor(options: { known: boolean }) {
    this.#last = options.known ? { input: 0, cached: 0, output: 0 } : null;
  }

  /** The usage of the turn that reported `usage` (cumulative), or undefined when the baseline is unknown. */
  turnUsage(usage: CodexUsageTotals): Usage | undefined {
    const now = totalsOf(usage);
    const last = this.#last;
    this.#last = now;
    if (!last) return undefined;
    const shrank = now.input < last.input || now.output < last.output;
    const base = shrank ? { input: 0, cached: 0, output: 0 } : last;
    const cached = Math.max(0, now.cached - base.cached);
    return { inputTokens: now.input - base.input, outputTokens: now.output - base.output, cachedInputTokens: cached };
  }
}

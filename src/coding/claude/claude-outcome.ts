import type { TurnOutcome, Usage } from '../harness.ts';

/** The fields of a Claude Code `result` message that decide a turn's outcome, cost and usage. */
export interface ClaudeResultFields {
  subtype: string;
  is_error: boolean;
  result?: string;
  errors?: string[];
  terminal_reason?: string | null;
  api_error_status?: number | null;
  /** Cumulative for the query() call (and continued from the transcript on resume). */
  total_cost_usd?: number;
  /** This turn's spend per model (newer CLIs). */
  model_usage_since_last_result?: Record<string, { costUSD?: number }>;
  usage?: { input_tokens?: number | null; output_tokens?: number | null; cache_read_input_tokens?: number | null };
}

/** Terminal reasons the CLI reports for a turn stopped by an interrupt (observed with 2.1.330). */
const ABORTED_REASONS = new Set(['aborted_streaming', 'aborted_tools']);

/** The human-readable reason a failed result gives: `errors[]` joined, else the `result` text, else the subtype. */
export function resultMessage(result: ClaudeResultFields): string {
  const errors = (result.errors ?? []).map((e) => e.trim()).filter(Boolean);
  if (errors.length > 0) return errors.join('; ');
  if (result.result && result.result.trim()) return result.result.trim();
  return result.subtype;
}

/**
 * Decides how a turn ended from its `result`, by `is_error` + `terminal_reason` + `api_error_status`, never by subtype
 * alone. `interruptRequested` says the harness asked for an interrupt during this turn: a failed turn then counts as
 * `interrupted` (so do the CLI's own aborted_* terminal reasons), unless the budget or turn limit explains it.
 */
export function classifyResult(
  result: ClaudeResultFields,
  options: { interruptRequested?: boolean } = {},
): TurnOutcome {
  if (!result.is_error) return result.result !== undefined ? { ok: true, result: result.result } : { ok: true };
  const reason = result.terminal_reason ?? undefined;
  const message = resultMessage(result);
  if (reason === 'budget_exhausted' || result.subtype === 'error_max_budget_usd') {
    return { ok: false, reason: 'budget_exhausted', message };
  }
  if (reason === 'max_turns' || result.subtype === 'error_max_turns')
    return { ok: false, reason: 'max_turns', message };
  if (options.interruptRequested || (reason !== undefined && ABORTED_REASONS.has(reason))) {
    return { ok: false, reason: 'interrupted', message: 'interrupted by the user' };
  }
  const status = result.api_error_status ?? undefined;
  if (reason === 'api_error' || status !== undefined) {
    return status !== undefined
      ? { ok: false, reason: 'api_error', message, apiErrorStatus: status }
      : { ok: false, reason: 'api_error', message };
  }
  return { ok: false, reason: 'execution_error', message };
}

/**
 * This turn's cost in USD: the sum of `model_usage_since_last_result[*].costUSD` when the CLI reports it, else
 * `total_cost_usd` minus the previous result's total in this run (`previousTotalUsd`), never negative.
 */
export function turnCostUsd(result: ClaudeResultFields, previousTotalUsd: number | undefined): number {
  const since = result.model_usage_since_last_result;
  if (since) {
    let sum = 0;
    for (const model of Object.values(since))
      sum += typeof model.costUSD === 'number' && Number.isFinite(model.costUSD) ? model.costUSD : 0;
    return Math.max(0, sum);
  }
  const total = result.total_cost_usd;
  if (typeof total !== 'number' || !Number.isFinite(total)) return 0;
  return Math.max(0, total - (previousTotalUsd ?? 0));
}

/** The turn's token counts from `usage` (main loop only), or undefined when the result has none. */
export function resultUsage(result: ClaudeResultFields): Usage | undefined {
  const usage = result.usage;
  if (!usage) return undefined;
  const out: Usage = { inputTokens: usage.input_tokens ?? 0, outputTokens: usage.output_tokens ?? 0 };
  if (typeof usage.cache_read_input_tokens === 'number') out.cachedInputTokens = usage.cache_read_input_tokens;
  return out;
}

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { HarnessEvent } from '../harness.ts';
import { ClaudeEventMapper, parseClaudeLine } from './claude-messages.ts';
import type { ClaudeResultFields } from './claude-outcome.ts';
import { classifyResult, resultUsage, turnCostUsd } from './claude-outcome.ts';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/agent-streams/', import.meta.url));

/** Parses a capture and maps it through one mapper, as one run would. */
function replay(name: string): HarnessEvent[] {
  const mapper = new ClaudeEventMapper();
  const events: HarnessEvent[] = [];
  for (const line of readFileSync(join(FIXTURES, name), 'utf8').split('\n').filter(Boolean)) {
    const parsed = parseClaudeLine(line);
    assert.ok(parsed.ok, `${name}: ${parsed.ok ? '' : parsed.error}`);
    events.push(...mapper.map(parsed.message));
  }
  return events;
}

function turnEnds(events: HarnessEvent[]): (HarnessEvent & { type: 'turnEnd' })[] {
  return events.filter((e): e is HarnessEvent & { type: 'turnEnd' } => e.type === 'turnEnd');
}

const near = (actual: number, expected: number): void =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} ≈ ${expected}`);

describe('outcome of the real captures', () => {
  it('every claude capture parses and ends each turn exactly once', () => {
    const captures = readdirSync(FIXTURES).filter((f) => f.startsWith('claude-') && f.endsWith('.jsonl'));
    assert.ok(captures.length >= 4);
    for (const name of captures) {
      const events = replay(name);
      assert.ok(turnEnds(events).length >= 1, name);
      assert.equal(events.filter((e) => e.type === 'warning').length, 0, name);
    }
  });

  it('budget → budget_exhausted with the CLI message', () => {
    const [end, ...rest] = turnEnds(replay('claude-budget.jsonl'));
    assert.equal(rest.length, 0);
    assert.deepEqual(end?.outcome, {
      ok: false,
      reason: 'budget_exhausted',
      message: 'Reached maximum budget ($0.0001)',
    });
    near(end?.costUsd ?? -1, 0.00018);
  });

  it('maxturns → max_turns', () => {
    const [end] = turnEnds(replay('claude-maxturns.jsonl'));
    assert.deepEqual(end?.outcome, { ok: false, reason: 'max_turns', message: 'Reached maximum number of turns (1)' });
  });

  it('multi → two ok turns with per-turn cost and one backend id', () => {
    const events = replay('claude-multi.jsonl');
    const ends = turnEnds(events);
    assert.equal(ends.length, 2);
    assert.ok(ends.every((e) => e.outcome.ok));
    assert.deepEqual(ends[1]?.outcome, { ok: true, result: 'MOCK REPLY to: second question' });
    for (const end of ends) near(end.costUsd, 0.00018);
    assert.deepEqual(ends[1]?.usage, { inputTokens: 10, outputTokens: 7, cachedInputTokens: 0 });
    const ids = new Set(events.flatMap((e) => (e.type === 'started' ? [e.backendSessionId] : [])));
    assert.deepEqual([...ids], ['af62ec28-9e75-4803-b8f1-42f4f66f8d55']);
    assert.deepEqual(
      events.filter((e) => e.type === 'text').map((e) => (e.type === 'text' ? e.text : '')),
      [
        "MOCK REPLY to: <system-reminder>\nAs you answer the user's questions, you ca",
        'MOCK REPLY to: second question',
      ],
    );
  });

  it('resume → ok, and the cost is this turn only although total_cost_usd carries the earlier turns', () => {
    const [end] = turnEnds(replay('claude-resume.jsonl'));
    assert.deepEqual(end?.outcome, { ok: true, result: 'MOCK REPLY to: third question' });
    near(end?.costUsd ?? -1, 0.00018);
  });
});

describe('classifyResult', () => {
  const base: ClaudeResultFields = { subtype: 'success', is_error: false };

  it('an API error reported with subtype success is an api_error with its status', () => {
    const outcome = classifyResult({
      ...base,
      is_error: true,
      terminal_reason: 'api_error',
      api_error_status: 400,
      result: 'API Error: 400 bad',
    });
    assert.deepEqual(outcome, { ok: false, reason: 'api_error', message: 'API Error: 400 bad', apiErrorStatus: 400 });
  });

  it('an api_error_status alone is enough; a terminal_reason alone gives no status', () => {
    assert.deepEqual(classifyResult({ ...base, is_error: true, api_error_status: 529, result: 'overloaded' }), {
      ok: false,
      reason: 'api_error',
      message: 'overloaded',
      apiErrorStatus: 529,
    });
    assert.deepEqual(
      classifyResult({ ...base, is_error: true, terminal_reason: 'api_error', api_error_status: null }),
      {
        ok: false,
        reason: 'api_error',
        message: 'success',
      },
    );
  });

  it('error_during_execution → execution_error, message from errors[], else result, else subtype', () => {
    const failed = { subtype: 'error_during_execution', is_error: true };
    assert.deepEqual(classifyResult({ ...failed, errors: ['first', ' second '] }), {
      ok: false,
      reason: 'execution_error',
      message: 'first; second',
    });
    assert.deepEqual(classifyResult({ ...failed, result: 'it broke' }), {
      ok: false,
      reason: 'execution_error',
      message: 'it broke',
    });
    assert.deepEqual(classifyResult(failed), {
      ok: false,
      reason: 'execution_error',
      message: 'error_during_execution',
    });
  });

  it('the subtype alone never decides: is_error false is ok whatever the subtype', () => {
    assert.deepEqual(classifyResult({ subtype: 'error_during_execution', is_error: false, result: 'fine' }), {
      ok: true,
      result: 'fine',
    });
    assert.deepEqual(classifyResult({ subtype: 'success', is_error: false }), { ok: true });
  });

  it('budget by subtype or terminal_reason; max_turns by terminal_reason', () => {
    assert.equal(classifyResult({ subtype: 'error_max_budget_usd', is_error: true }).ok, false);
    assert.deepEqual(classifyResult({ subtype: 'error_max_budget_usd', is_error: true, errors: ['b'] }), {
      ok: false,
      reason: 'budget_exhausted',
      message: 'b',
    });
    assert.deepEqual(classifyResult({ subtype: 'success', is_error: true, terminal_reason: 'budget_exhausted' }), {
      ok: false,
      reason: 'budget_exhausted',
      message: 'success',
    });
    assert.deepEqual(classifyResult({ subtype: 'x', is_error: true, terminal_reason: 'max_turns', errors: ['m'] }), {
      ok: false,
      reason: 'max_turns',
      message: 'm',
    });
  });

  it('interrupts: aborted_* terminal reasons, or any failed turn the harness interrupted', () => {
    const aborted = { subtype: 'error_during_execution', is_error: true, errors: ['[ede_diagnostic] …'] };
    assert.equal(classifyResult({ ...aborted, terminal_reason: 'aborted_streaming' }).ok, false);
    for (const terminal_reason of ['aborted_streaming', 'aborted_tools']) {
      const outcome = classifyResult({ ...aborted, terminal_reason });
      assert.equal(!outcome.ok && outcome.reason, 'interrupted');
    }
    const requested = classifyResult(aborted, { interruptRequested: true });
    assert.equal(!requested.ok && requested.reason, 'interrupted');
    assert.deepEqual(classifyResult({ ...base, result: 'done anyway' }, { interruptRequested: true }), {
      ok: true,
      result: 'done anyway',
    });
  });
});

describe('turnCostUsd and resultUsage', () => {
  it('sums model_usage_since_last_result over models', () => {
    near(
      turnCostUsd(
        {
          ...{ subtype: 's', is_error: false },
          total_cost_usd: 9,
          model_usage_since_last_result: { a: { costUSD: 0.25 }, b: { costUSD: 0.5 }, c: {} },
        },
        1,
      ),
      0.75,
    );
  });

  it('an empty per-turn map means this turn cost nothing', () => {
    assert.equal(
      turnCostUsd({ subtype: 's', is_error: true, total_cost_usd: 3, model_usage_since_last_result: {} }, 1),
      0,
    );
  });

  it('falls back to the cumulative total minus the previous one, never negative', () => {
    near(turnCostUsd({ subtype: 's', is_error: false, total_cost_usd: 0.3 }, 0.1), 0.2);
    near(turnCostUsd({ subtype: 's', is_error: false, total_cost_usd: 0.3 }, undefined), 0.3);
    assert.equal(turnCostUsd({ subtype: 's', is_error: false, total_cost_usd: 0.1 }, 0.3), 0);
    assert.equal(turnCostUsd({ subtype: 's', is_error: false }, 0.3), 0);
  });

  it('reads usage tokens', () => {
    assert.deepEqual(
      resultUsage({
        subtype: 's',
        is_error: false,
        usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 3 },
      }),
      {
        inputTokens: 5,
        outputTokens: 2,
        cachedInputTokens: 3,
      },
    );
    assert.deepEqual(resultUsage({ subtype: 's', is_error: false, usage: {} }), { inputTokens: 0, outputTokens: 0 });
    assert.equal(resultUsage({ subtype: 's', is_error: false }), undefined);
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CodexUsageTracker } from './codex-usage.ts';

const totals = (input: number, output: number, cached = 0) => ({
  input_tokens: input,
  cached_input_tokens: cached,
  output_tokens: output,
});

test('a new thread: the first turn is its own totals, later turns the differences', () => {
  const tracker = new CodexUsageTracker({ known: true });
  assert.deepEqual(tracker.turnUsage(totals(200, 20, 40)), {
    inputTokens: 200,
    outputTokens: 20,
    cachedInputTokens: 40,
  });
  assert.deepEqual(tracker.turnUsage(totals(300, 30, 60)), {
    inputTokens: 100,
    outputTokens: 10,
    cachedInputTokens: 20,
  });
});

test('an unknown baseline (resumed by id): undefined first, then differences', () => {
  const tracker = new CodexUsageTracker({ known: false });
  assert.equal(tracker.turnUsage(totals(300, 30)), undefined);
  assert.deepEqual(tracker.turnUsage(totals(310, 31)), { inputTokens: 10, outputTokens: 1, cachedInputTokens: 0 });
});

test('totals that go down are taken as the turn usage; missing cached counts are 0', () => {
  const tracker = new CodexUsageTracker({ known: true });
  tracker.turnUsage(totals(500, 50, 10));
  assert.deepEqual(tracker.turnUsage(totals(120, 12, 5)), { inputTokens: 120, outputTokens: 12, cachedInputTokens: 5 });
  assert.deepEqual(tracker.turnUsage({ input_tokens: 130, output_tokens: 13 }), {
    inputTokens: 10,
    outputTokens: 1,
    cachedInputTokens: 0,
  });
});

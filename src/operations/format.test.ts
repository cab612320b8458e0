// The stats block as chats, the CLI and the web page show it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionMetrics } from '../store/coding-session-runs.ts';
import { formatStats } from './format.ts';

const metrics = (over: Partial<SessionMetrics>): SessionMetrics => ({
  totalCostUsd: 0.5,
  costPerDay: { '2026-11-25': 0.5 },
  sessionsByStatus: { completed: 2, failed: 1, killed: 1, interrupted: 0, running: 1 },
  totalLaunched: 4,
  averageDurationMs: 90_000,
  mostExpensive: null,
  ...over,
});

describe('formatStats', () => {
  it('counts runs by status, so a resume shows beside the launches and the numbers add up', () => {
    const [first] = formatStats(metrics({})).split('\n');
    assert.equal(
      first,
      '📊 Sessions: 4 launched, 1 resumed — 🟢 1 running, ✅ 2 completed, ❌ 1 failed, ⛔ 1 killed, ⏸️ 0 interrupted',
    );
  });

  it('says nothing of resumes when there were none', () => {
    const [first] = formatStats(metrics({ totalLaunched: 5 })).split('\n');
    assert.match(first ?? '', /^📊 Sessions: 5 launched — 🟢 1 running/);
  });
});

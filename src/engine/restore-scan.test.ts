import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { scanBackward } from '../store/jsonl-scan.ts';
import { RestoreScanner } from './restore-scan.ts';

/** A log of `turns` closed turns (user and system messages alternate), then one message accepted and never started. */
function writeLog(path: string, turns: number): void {
  const lines: string[] = [];
  const push = (entry: Record<string, unknown>) =>
    lines.push(JSON.stringify({ ...entry, v: 1, seq: lines.length + 1, ts: 1_000 + lines.length }));
  push({
    type: 'session_created',
    descriptor: { type: 'user', connector: 'telegram', userId: '1', channelId: 'telegram|1' },
  });
  for (let n = 0; n < turns; n += 1) {
    const id = `m${n}`;
    push({
      type: 'incoming',
      messageId: id,
      kind: n % 2 === 0 ? 'user' : 'system',
      origin: 'telegram|1',
      text: `message ${n} (not an incoming word here)`,
    });
    push({ type: 'turn_start', messageId: id });
    push({ type: 'assistant', text: 'the incoming request is handled', toolCalls: [] });
    push({ type: 'outgoing', text: 'done', target: 'telegram|1' });
    push({ type: 'turn_end', messageId: id, outcome: 'ok' });
  }
  push({ type: 'incoming', messageId: 'queued', kind: 'system', origin: 'wake', text: 'later' });
  writeFileSync(path, `${lines.join('\n')}\n`);
}

describe('restore scan of a log with no index', () => {
  it('passes over the records it no longer needs, and still finds every accepted message id, the queue and the last user time', () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 's.jsonl');
      writeLog(path, 400);
      const scanner = new RestoreScanner(0);
      const report = scanBackward(
        path,
        (raw) => scanner.visitRaw(raw),
        512,
        () => scanner.needle(),
      );
      const { state } = scanner;
      assert.deepEqual(
        state.unindexed.map((u) => u.messageId),
        [...Array.from({ length: 400 }, (_, n) => `m${n}`), 'queued'],
      );
      assert.deepEqual(
        state.pending.map((p) => p.messageId),
        ['queued'],
      );
      assert.equal(state.lastOutcome, 'ok');
      assert.equal(state.lastUserAt, 1_000 + 1 + 398 * 5, 'the last user message is m398');
      assert.equal(state.lastSeq, 2_002);
      assert.ok(
        report.visited < 1_000,
        `records parsed: ${report.visited} of 2,002 (the assistant lines that say "incoming" are parsed too)`,
      );
      assert.equal(report.reachedStart, true);
    } finally {
      dir.remove();
    }
  });
});

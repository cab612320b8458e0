import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { ensureLines } from '../../store/artifact-files.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import { capTail, DispatchArtifacts, EXCLUDE_LINES } from './artifacts.ts';

describe('artifacts', () => {
  let dir: { path: string; remove: () => void };
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('caps text to a byte budget keeping the tail, on a character boundary', () => {
    assert.equal(capTail('short', 100), 'short');
    const text = `${'é'.repeat(5_000)}THE END`;
    const capped = capTail(text, 8_192);
    assert.ok(Buffer.byteLength(capped) <= 8_192);
    assert.ok(capped.endsWith('THE END'));
    assert.match(capped, /^\[… \d+ earlier bytes cut\]\né/);
    assert.doesNotMatch(capped, /\uFFFD/);
  });

  it('writes manifest, plan, capped worker output, verdict, summary and an append-only log', async () => {
    let now = 1_000;
    const a = new DispatchArtifacts(join(dir.path, 'wt'), { now: () => now, maxWorkerBytes: 8_192 });
    const d = {
      id: 'd1',
      issueId: 'i1',
      identifier: 'ENG-1',
      title: 't',
      status: 'working',
      attempt: 1,
      tier: 'junior',
      createdAt: 0,
      updatedAt: 0,
      completedAt: null,
    } as unknown as DispatchRecord;
    await a.manifest(d, 'https://linear.app/x');
    await a.plan('# plan');
    await a.workerOutput(1, 'y'.repeat(20_000));
    await a.audit(1, { pass: false, criteria: [], gaps: ['g'], testResults: '', parsed: true }, { sessionId: 's' });
    await a.summary('sum');
    await a.log('worker-started', { sessionId: 's' });
    now = 2_000;
    await a.log('watchdog-kill', { reason: 'no activity' });
    await a.close();
    const base = join(dir.path, 'wt', '.switchboard');
    assert.deepEqual(readdirSync(base).sort(), [
      'audit-1.json',
      'log.jsonl',
      'manifest.json',
      'plan.md',
      'summary.md',
      'worker-1.md',
    ]);
    assert.equal(JSON.parse(readFileSync(join(base, 'manifest.json'), 'utf8')).issue.url, 'https://linear.app/x');
    assert.ok(readFileSync(join(base, 'worker-1.md')).length <= 8_192);
    assert.deepEqual(JSON.parse(readFileSync(join(base, 'audit-1.json'), 'utf8')).gaps, ['g']);
    const log = readFileSync(join(base, 'log.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      log.map((r) => [r.seq, r.type, r.ts]),
      [
        [1, 'worker-started', 1_000],
        [2, 'watchdog-kill', 2_000],
      ],
    );
    // Reopened later, the log continues.
    const again = new DispatchArtifacts(join(dir.path, 'wt'), { now: () => 3_000, maxWorkerBytes: 8_192 });
    await again.log('done');
    await again.close();
    assert.equal(readFileSync(join(base, 'log.jsonl'), 'utf8').trim().split('\n').length, 3);
  });

  it('adds the exclude lines once', async () => {
    const file = join(dir.path, 'info', 'exclude');
    assert.deepEqual(await ensureLines(file, EXCLUDE_LINES), EXCLUDE_LINES);
    assert.deepEqual(await ensureLines(file, EXCLUDE_LINES), []);
    assert.equal(readFileSync(file, 'utf8'), '.switchboard/*\n!.switchboard/prompts.yaml\n');
  });
});

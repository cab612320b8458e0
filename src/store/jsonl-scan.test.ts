import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { readFirstRecord, scanBackward } from './jsonl-scan.ts';

const line = (seq: number, extra: Record<string, unknown> = {}): string =>
  `${JSON.stringify({ type: 't', v: 1, seq, ts: seq, ...extra })}\n`;

describe('jsonl scan', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  beforeEach(() => {
    dir = tempDir();
    path = join(dir.path, 'a.jsonl');
  });
  afterEach(() => dir.remove());

  function seqsBackward(chunk: number, stopAt = 0): { seqs: number[]; report: ReturnType<typeof scanBackward> } {
    const seqs: number[] = [];
    const report = scanBackward(path, (r) => (seqs.push(r.seq), r.seq > stopAt), chunk);
    return { seqs, report };
  }

  it('visits every record newest first, whatever the chunk size', () => {
    let text = '';
    for (let i = 1; i <= 50; i += 1) text += line(i, { pad: 'x'.repeat(i * 7) });
    writeFileSync(path, text);
    for (const chunk of [1, 7, 64, 1000, 1 << 20]) {
      const { seqs, report } = seqsBackward(chunk);
      assert.deepEqual(
        seqs,
        Array.from({ length: 50 }, (_, i) => 50 - i),
        `chunk ${chunk}`,
      );
      assert.deepEqual(report, { visited: 50, malformed: 0, reachedStart: true });
    }
  });

  it('with a needle, visits only the lines that hold it, across chunk boundaries, and can switch it on mid-scan', () => {
    let text = '';
    for (let i = 1; i <= 60; i += 1)
      text += line(i, { kind: i % 4 === 0 ? 'incoming' : 'other', pad: 'x'.repeat((i * 13) % 40) });
    writeFileSync(path, text);
    const needle = Buffer.from('incoming');
    const wanted = Array.from({ length: 60 }, (_, i) => 60 - i).filter((seq) => seq % 4 === 0);
    for (const chunk of [1, 5, 33, 100, 1 << 20]) {
      const seqs: number[] = [];
      const report = scanBackward(
        path,
        (r) => (seqs.push(r.seq), true),
        chunk,
        () => needle,
      );
      assert.deepEqual(seqs, wanted, `chunk ${chunk}`);
      assert.deepEqual(report, { visited: wanted.length, malformed: 0, reachedStart: true });
      // Every line until seq 50 has been seen, then only the needle's.
      const mixed: number[] = [];
      scanBackward(
        path,
        (r) => (mixed.push(r.seq), true),
        chunk,
        () => (mixed.length > 0 && (mixed.at(-1) as number) <= 50 ? needle : null),
      );
      assert.deepEqual(
        mixed,
        [...Array.from({ length: 11 }, (_, i) => 60 - i), ...wanted.filter((seq) => seq < 50)],
        `chunk ${chunk}`,
      );
    }
  });

  it('stops when the visitor says so, reading no further', () => {
    writeFileSync(path, [1, 2, 3, 4, 5].map((i) => line(i)).join(''));
    const { seqs, report } = seqsBackward(8, 4);
    assert.deepEqual(seqs, [5, 4]);
    assert.equal(report.reachedStart, false);
  });

  it('skips a torn last line and malformed lines, keeping the records around them', () => {
    writeFileSync(path, `${line(1)}{"broken\n\n${line(2)}${line(3)}{"type":"t","v":1,"se`);
    for (const chunk of [3, 4096]) {
      const { seqs, report } = seqsBackward(chunk);
      assert.deepEqual(seqs, [3, 2, 1]);
      assert.equal(report.malformed, 2);
    }
  });

  it('handles empty files and a file that is only a torn line', () => {
    writeFileSync(path, '');
    assert.deepEqual(seqsBackward(16).report, { visited: 0, malformed: 0, reachedStart: true });
    assert.equal(readFirstRecord(path), null);
    writeFileSync(path, '{"type":"t","v":1');
    assert.deepEqual(seqsBackward(4).report, { visited: 0, malformed: 1, reachedStart: true });
    assert.equal(readFirstRecord(path), null);
  });

  it('reads the first record only, even a long one', () => {
    writeFileSync(path, line(1, { big: 'y'.repeat(20_000) }) + line(2));
    assert.equal(readFirstRecord(path)?.seq, 1);
    writeFileSync(path, `not json\n${line(2)}`);
    assert.equal(readFirstRecord(path), null);
  });
});

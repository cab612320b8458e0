import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { fsyncDirectoryAsync, JsonlLog } from './jsonl-log.ts';

describe('JsonlLog', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  beforeEach(() => {
    dir = tempDir();
    path = join(dir.path, 'a.jsonl');
  });
  afterEach(() => dir.remove());

  it("a new log's directory entry is synced off the event loop, and its first sync waits for it", async () => {
    const log = JsonlLog.open(path, { now: () => 1 });
    log.write({ type: 'a' });
    await log.sync();
    // Nothing new to make durable: resolves at once, without a directory fsync.
    await log.sync();
    await log.close();
    await assert.rejects(fsyncDirectoryAsync(join(dir.path, 'missing')), /ENOENT/);
  });

  it('writes one line per record with v, seq and ts, and reads from a seq', async () => {
    const log = JsonlLog.open(path, { now: () => 42 });
    await log.append({ type: 'a', n: 1 });
    log.write({ type: 'b' });
    await log.sync();
    assert.deepEqual(
      readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      [
        { type: 'a', n: 1, v: 1, seq: 1, ts: 42 },
        { type: 'b', v: 1, seq: 2, ts: 42 },
      ],
    );
    assert.deepEqual(
      log.readFrom(2).map((r) => r.type),
      ['b'],
    );
    await log.close();
  });

  it('cuts a torn last line on open and continues the sequence', async () => {
    const log = JsonlLog.open(path);
    await log.append({ type: 'a' });
    await log.append({ type: 'b' });
    await log.close();
    appendFileSync(path, '{"type":"c","v":1,"se');
    const reopened = JsonlLog.open(path);
    assert.deepEqual(reopened.repair, { truncatedBytes: 21, droppedLines: 1 });
    assert.equal(reopened.lastSeq, 2);
    const c = await reopened.append({ type: 'c' });
    assert.equal(c.seq, 3);
    assert.deepEqual(
      reopened.readFrom().map((r) => r.seq),
      [1, 2, 3],
    );
    await reopened.close();
  });

  it('drops a complete but unparseable last line too', async () => {
    writeFileSync(path, '{"type":"a","v":1,"seq":1,"ts":1}\n{"type":"b","v":1,"seq":2,\n');
    const log = JsonlLog.open(path);
    assert.equal(log.lastSeq, 1);
    assert.equal(log.repair?.droppedLines, 1);
    await log.close();
  });

  it('skips and counts malformed lines in the middle without losing the rest', async () => {
    writeFileSync(path, '{"type":"a","v":1,"seq":1,"ts":1}\ngarbage\n{"type":"b","v":1,"seq":2,"ts":1}\n');
    const log = JsonlLog.open(path);
    assert.equal(log.repair, null);
    assert.deepEqual(
      log.readFrom().map((r) => r.type),
      ['a', 'b'],
    );
    assert.equal(log.malformedLines, 1);
    await log.close();
  });

  it('group-commits: many appends share fdatasync calls and all resolve', async () => {
    const log = JsonlLog.open(path, { fsyncBatchMs: 5 });
    const records = await Promise.all(Array.from({ length: 500 }, (_, i) => log.append({ type: 'x', i })));
    assert.deepEqual(
      records.map((r) => r.seq),
      Array.from({ length: 500 }, (_, i) => i + 1),
    );
    assert.equal(readFileSync(path, 'utf8').trim().split('\n').length, 500);
    await log.close();
  });
});

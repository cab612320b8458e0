import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { EngineLogs } from './engine-logs.ts';

describe('EngineLogs', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('keeps at most maxOpenLogs files open and continues each sequence after reopening', async () => {
    const logs = new EngineLogs(dir.path, { fsyncBatchMs: 0, now: () => 7, maxOpenLogs: 2 });
    const ids = ['a', 'b', 'c'];
    for (let round = 0; round < 4; round += 1) for (const id of ids) logs.write(id, { type: 'x', round });
    await Promise.all(ids.map((id) => logs.sync(id)));
    assert.deepEqual(logs.list(), ids);
    for (const id of ids) {
      const seqs: number[] = [];
      logs.scanBackward(id, (r) => (seqs.unshift(r.seq), true));
      assert.deepEqual(seqs, [1, 2, 3, 4], id);
      assert.equal(logs.readFirst(id)?.round, 0);
    }
    await logs.closeAll();
    assert.throws(() => logs.write('a', { type: 'x' }), /closed/);
  });

  it('refuses ids that cannot be file names', () => {
    const logs = new EngineLogs(dir.path, { fsyncBatchMs: 0, now: () => 0, maxOpenLogs: 4 });
    assert.throws(() => logs.write('../escape', { type: 'x' }), /invalid engine session id/);
  });
});

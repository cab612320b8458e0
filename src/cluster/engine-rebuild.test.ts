import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { tempDirPerTest } from '../../test/support/temp-dir.ts';
import { EngineLogs } from '../store/engine-logs.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import { LogRecordStore } from '../store/log-records.ts';
import { rebuildEngineLogs } from './engine-rebuild.ts';

function rec(seq: number, type = 'incoming'): LogRecord {
  return { v: 1, seq, ts: 100 + seq, type, text: `m${seq}` };
}

describeEachDatabase('engine logs rebuilt from the database', (fresh) => {
  const dir = tempDirPerTest({ prefix: 'sb-rebuild-' });

  it('replaces each log the table holds with its records, and leaves the others alone', async () => {
    const { db, dialect } = await fresh();
    const store = new LogRecordStore(db, { notify: dialect === 'postgres' });
    await store.apply([
      { op: 'write', kind: 'engine', log: 'user-a', record: rec(1, 'session') },
      { op: 'write', kind: 'engine', log: 'user-a', record: rec(2) },
      { op: 'write', kind: 'engine', log: 'user-a', record: rec(3) },
      { op: 'write', kind: 'session', log: 'coding-1', record: rec(1) },
    ]);
    const engineDir = join(dir.path, 'engine');
    // What a previous run of this node left: a stale copy of user-a (1 record), and a log the table does not hold.
    const first = new EngineLogs(engineDir, { fsyncBatchMs: 0, now: () => 1, maxOpenLogs: 4 });
    first.write('user-a', { type: 'session', text: 'stale' });
    first.write('only-here', { type: 'session' });
    await first.closeAll();

    assert.deepEqual(await rebuildEngineLogs(store, engineDir), { logs: 1, records: 3 });
    const lines = readFileSync(join(engineDir, 'user-a.jsonl'), 'utf8').trim().split('\n');
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as LogRecord).seq),
      [1, 2, 3],
    );
    assert.equal(statSync(join(engineDir, 'user-a.jsonl')).mode & 0o777, 0o600);
    const logs = new EngineLogs(engineDir, { fsyncBatchMs: 0, now: () => 1, maxOpenLogs: 4 });
    assert.deepEqual(logs.list(), ['only-here', 'user-a']);
    assert.equal(logs.lastSeq('user-a'), 3);
    assert.equal(logs.lastSeq('only-here'), 1);
    await logs.closeAll();
  });
});

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { tempDirPerTest } from '../../test/support/temp-dir.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import type { LogRecord } from './jsonl-log.ts';
import type { RecordChange } from './log-records.ts';
import { LogRecordStore, parseRecordNotice, RecordMirror } from './log-records.ts';
import { SessionLogs } from './session-logs.ts';

function rec(seq: number, text = `r${seq}`): LogRecord {
  return { v: 1, seq, ts: 1000 + seq, type: 'output', text };
}

it('parses the NOTIFY payload of new records', () => {
  assert.deepEqual(parseRecordNotice('session|abc|12'), { kind: 'session', log: 'abc', seq: 12 });
  assert.equal(parseRecordNotice('other|abc|12'), null);
  assert.equal(parseRecordNotice('engine|abc|x'), null);
});

describeEachDatabase('log records', (fresh) => {
  const dir = tempDirPerTest({ prefix: 'sb-records-' });

  it('writes records in groups, reads a log from a seq, and removes a log', async () => {
    const { db, dialect } = await fresh();
    const store = new LogRecordStore(db, { notify: dialect === 'postgres' });
    const changes: RecordChange[] = [];
    for (let seq = 1; seq <= 1200; seq += 1)
      changes.push({ op: 'write', kind: 'session', log: 's1', record: rec(seq) });
    changes.push({ op: 'write', kind: 'engine', log: 'e1', record: rec(1) });
    await store.apply(changes);
    assert.equal(await store.lastSeq('session', 's1'), 1200);
    assert.equal(await store.lastSeq('session', 'nope'), 0);
    assert.deepEqual(
      (await store.read('session', 's1', 1199)).map((r) => r.text),
      ['r1199', 'r1200'],
    );
    assert.deepEqual(await store.logs('engine'), ['e1']);
    // A seq written again (the file's torn tail was cut after a crash) takes the new record.
    await store.apply([{ op: 'write', kind: 'session', log: 's1', record: rec(1200, 'again') }]);
    assert.equal((await store.read('session', 's1', 1200))[0]?.text, 'again');
    await store.apply([{ op: 'remove', kind: 'session', log: 's1' }]);
    assert.deepEqual(await store.read('session', 's1'), []);
    assert.deepEqual(await store.logs('engine'), ['e1']);
  });

  it("a session log's sync covers the database commit of every record written before it", async () => {
    const { db, dialect } = await fresh();
    const store = new LogRecordStore(db, { notify: dialect === 'postgres' });
    const mirror = new RecordMirror({ store, logger: silentLogger(), clock: new ManualClock(), retryMs: 1000 });
    const logs = new SessionLogs(dir.path, { fsyncBatchMs: 0, now: () => 5, mirror });
    for (let i = 0; i < 50; i += 1) logs.write('sess', { type: 'output', text: `line ${i}` });
    await logs.sync('sess');
    const stored = await store.read('session', 'sess');
    assert.deepEqual(stored, logs.read('sess'));
    logs.remove('sess');
    await mirror.sync();
    assert.deepEqual(await store.read('session', 'sess'), []);
    await logs.closeAll();
  });

  it("another node's write to a session's log continues the database's numbering once prepared", async () => {
    const { db, dialect } = await fresh();
    const store = new LogRecordStore(db, { notify: dialect === 'postgres' });
    const mirror = new RecordMirror({ store, logger: silentLogger(), clock: new ManualClock(), retryMs: 1000 });
    const options = { fsyncBatchMs: 0, now: () => 5, mirror, database: store };
    const onA = new SessionLogs(join(dir.path, 'a'), options);
    for (let i = 0; i < 3; i += 1) onA.write('moved', { type: 'output', text: `on a ${i}` });
    await onA.sync('moved');
    // The session goes on on node b, which has no file of it (or a stale one).
    const onB = new SessionLogs(join(dir.path, 'b'), options);
    await onB.prepare('moved');
    assert.equal(onB.lastSeq('moved'), 3);
    onB.write('moved', { type: 'output', text: 'on b' });
    await onB.sync('moved');
    const expected = [
      [1, 'on a 0'],
      [2, 'on a 1'],
      [3, 'on a 2'],
      [4, 'on b'],
    ];
    assert.deepEqual(
      (await store.read('session', 'moved')).map((r) => [r.seq, r.text]),
      expected,
    );
    assert.deepEqual(
      onB.read('moved').map((r) => [r.seq, r.text]),
      expected,
    );
    // Nothing to do when the local log is up to date.
    await onB.prepare('moved');
    assert.equal(onB.lastSeq('moved'), 4);
    await Promise.all([onA.closeAll(), onB.closeAll()]);
  });

  it('a failed commit rejects the syncs waiting for it and is tried again after retryMs', async () => {
    const { db, dialect } = await fresh();
    const real = new LogRecordStore(db, { notify: dialect === 'postgres' });
    let failing = true;
    const store = Object.assign(Object.create(real) as LogRecordStore, {
      apply: (changes: readonly RecordChange[]) =>
        failing ? Promise.reject(new Error('database gone')) : real.apply(changes),
    });
    const clock = new ManualClock();
    const mirror = new RecordMirror({ store, logger: silentLogger(), clock, retryMs: 1000 });
    mirror.write('engine', 'e1', rec(1));
    await assert.rejects(mirror.sync(), /database gone/);
    failing = false;
    const later = mirror.sync();
    clock.advance(1000);
    await later;
    assert.equal(await real.lastSeq('engine', 'e1'), 1);
  });
});

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { storedSession } from '../../test/support/stored-session.ts';
import { RecordRetention } from '../cluster/record-retention.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { CodingSessionStore } from './coding-sessions.ts';
import type { RecordChange } from './log-records.ts';
import { LogRecordStore } from './log-records.ts';
import { pruneSessionRecords } from './log-records-retention.ts';

const HOUR = 3_600_000;

/** `count` records of log `log` of `kind`, written at `ts`. */
function records(kind: 'session' | 'engine', log: string, count: number, ts: number): RecordChange[] {
  return Array.from({ length: count }, (_, i) => ({
    op: 'write' as const,
    kind,
    log,
    record: { v: 1, seq: i + 1, ts, type: 'output', text: `${log}-${i + 1}` },
  }));
}

describeEachDatabase('retention of log records', (fresh) => {
  it('deletes the records of session logs whose session is gone, in bounded batches, and keeps the rest', async () => {
    const { db, dialect } = await fresh();
    const clock = new ManualClock();
    const old = clock.now();
    const store = new LogRecordStore(db, { notify: dialect === 'postgres' });
    await new CodingSessionStore(db).insert(storedSession({ id: 'kept', name: 'kept' }));
    await store.apply([
      ...records('session', 'kept', 5, old),
      ...records('session', 'gone-1', 2_500, old),
      ...records('session', 'gone-2', 3, old),
      ...records('engine', 'engine-1', 4, old),
    ]);
    clock.advance(2 * HOUR);
    // Gone, but its newest record is recent: its session may be being stored; kept until the grace passes.
    await store.apply(records('session', 'gone-recent', 2, clock.now()));
    const retention = new RecordRetention({
      db,
      clock,
      logger: silentLogger(),
      intervalMs: HOUR,
      graceMs: HOUR,
      maxLogs: 1,
      batchRows: 1000,
    });
    assert.deepEqual(await retention.runOnce(), { logs: 2, records: 2_503 });
    assert.deepEqual(await store.logs('session'), ['gone-recent', 'kept']);
    assert.equal(await store.lastSeq('session', 'kept'), 5);
    assert.deepEqual(await store.logs('engine'), ['engine-1'], "the engine's records are kept");
    assert.deepEqual(await retention.runOnce(), { logs: 0, records: 0 }, 'a second pass finds nothing');
    clock.advance(2 * HOUR);
    assert.deepEqual(await retention.runOnce(), { logs: 1, records: 2 });
    assert.deepEqual(await store.logs('session'), ['kept']);
  });

  it('runs a pass at start and then every interval, until stopped', async () => {
    const { db, dialect } = await fresh();
    const clock = new ManualClock();
    const store = new LogRecordStore(db, { notify: dialect === 'postgres' });
    await store.apply(records('session', 'gone', 3, clock.now()));
    clock.advance(2 * HOUR);
    const retention = new RecordRetention({ db, clock, logger: silentLogger(), intervalMs: HOUR, graceMs: HOUR / 2 });
    await retention.start();
    await retention.stop();
    assert.deepEqual(await store.logs('session'), [], 'the first pass ran at start (stop waited for it)');
    await retention.start();
    await retention.idle();
    await store.apply(records('session', 'later', 3, clock.now()));
    clock.advance(2 * HOUR);
    await retention.stop();
    assert.deepEqual(await store.logs('session'), [], 'the timer ran a pass');
    assert.equal(clock.pending, 0, 'no timer left');
  });

  it('walks the logs in bounded passes, each after the last, and finds only orphans older than before', async () => {
    const { db, dialect } = await fresh();
    const store = new LogRecordStore(db, { notify: dialect === 'postgres' });
    const sessions = new CodingSessionStore(db);
    const before = 10 * HOUR;
    const old = before - HOUR;
    // Twelve logs, named so that the kept ones, the old orphans and the young ones interleave in name order.
    for (const id of ['k1', 'k2', 'k3']) await sessions.insert(storedSession({ id, name: id }));
    await store.apply([
      ...records('session', 'k1', 3, old),
      ...records('session', 'k2', 3, old),
      ...records('session', 'k3', 3, old),
      ...records('session', 'o1', 3, old),
      ...records('session', 'o2', 2, old),
      ...records('session', 'o3', 1, old),
      ...records('session', 'o4', 4, old),
      // Young orphans: its only record at `before` exactly, and one whose newest record (by time) is an early seq.
      ...records('session', 'y1', 1, before),
      { op: 'write', kind: 'session', log: 'y2', record: { v: 1, seq: 1, ts: before + 1, type: 'output' } },
      { op: 'write', kind: 'session', log: 'y2', record: { v: 1, seq: 2, ts: old, type: 'output' } },
      ...records('engine', 'e1', 2, old),
      ...records('engine', 'o5', 2, old),
    ]);
    const limits = { before, maxLogs: 2, batchRows: 2, maxScan: 3 };
    const first = await pruneSessionRecords(db, limits);
    // k1, k2, k3 looked at: kept sessions, nothing deleted; the walk goes on after k3.
    assert.deepEqual(first, { logs: 0, records: 0, next: 'k3' });
    const second = await pruneSessionRecords(db, { ...limits, after: first.next });
    assert.deepEqual(second, { logs: 2, records: 5, next: 'o2' }, 'o1 and o2: maxLogs reached, the next pass goes on');
    const third = await pruneSessionRecords(db, { ...limits, after: second.next });
    assert.deepEqual(third, { logs: 2, records: 5, next: 'o4' });
    const fourth = await pruneSessionRecords(db, { ...limits, after: third.next });
    assert.deepEqual(fourth, { logs: 0, records: 0, next: null }, 'y1 and y2 are young: the walk reached the end');
    assert.deepEqual(await store.logs('session'), ['k1', 'k2', 'k3', 'y1', 'y2']);
    assert.deepEqual(await store.logs('engine'), ['e1', 'o5'], 'engine records are never pruned');
    // The retention walks the same way to the end in one run, whatever its bounds.
    await store.apply(records('session', 'o6', 3, old));
    const clock = new ManualClock(before + HOUR);
    const retention = new RecordRetention({
      db,
      clock,
      logger: silentLogger(),
      intervalMs: HOUR,
      graceMs: HOUR,
      maxLogs: 1,
      maxScan: 2,
      batchRows: 2,
    });
    assert.deepEqual(await retention.runOnce(), { logs: 1, records: 3 });
    assert.deepEqual(await store.logs('session'), ['k1', 'k2', 'k3', 'y1', 'y2']);
  });
});

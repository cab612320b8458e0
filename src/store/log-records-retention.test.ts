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
});

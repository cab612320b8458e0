// The coding-session store and the restart notices, on SQLite and on PostgreSQL: lookup keys, patches, paging by
// (start time, id), eviction, runs and their metrics, and the restart mark that commits with its notice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { storedSession } from '../../test/support/stored-session.ts';
import { CodingSessionStore } from './coding-sessions.ts';
import { RestartNoticeStore } from './restart-notices.ts';

const DAY = 86_400_000;
/** 2026-01-01T00:00:00Z. */
const T0 = 1_767_225_600_000;

describeEachDatabase('CodingSessionStore', (fresh) => {
  test('inserts, reads back every field, and resolves a session by id, name and backend id', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    const session = storedSession(
      {
        id: 's1',
        name: 'one',
        backendSessionId: 'b-1',
        startedAt: 2 ** 41 + 7,
        foreground: { 'web|w': { on: true, seenSeq: 3 } },
        forked: true,
      },
      { multiTurn: false, allowedTools: ['Bash'] },
    );
    await store.insert(session);
    assert.deepEqual(await store.get('s1'), session);
    for (const ref of ['s1', 'one', 'b-1']) assert.equal((await store.resolve(ref))?.id, 's1');
    assert.equal(await store.resolve('nope'), null);
    assert.equal(await store.nameTaken('one'), true);
    assert.equal(await store.nameTaken('two'), false);
  });

  test('update patches only the given fields; a new backend id becomes a key, moved from an older holder', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    await store.insert(storedSession({ id: 's1', name: 'one', backendSessionId: 'b-1' }));
    await store.insert(storedSession({ id: 's2', name: 'two' }));
    await store.update('s2', {
      status: 'running',
      backendSessionId: 'b-1',
      budgetExhausted: true,
      completedAt: null,
      costUsd: 0.25,
    });
    const two = await store.get('s2');
    assert.deepEqual(
      [two?.status, two?.backendSessionId, two?.budgetExhausted, two?.costUsd, two?.prompt],
      ['running', 'b-1', true, 0.25, 'do it'],
    );
    assert.equal((await store.resolve('b-1'))?.id, 's2');
    // An id key never moves: a backend id equal to another session's id leaves that id with its session.
    await store.update('s2', { backendSessionId: 's1' });
    assert.equal((await store.resolve('s1'))?.id, 's1');
    await store.update('s2', {});
    assert.equal((await store.get('s2'))?.backendSessionId, 's1');
  });

  test("a session's updates land in the order they were asked for, even when none is awaited before the next", async () => {
    const store = new CodingSessionStore((await fresh()).db);
    const session = storedSession({ id: 's1', name: 'one' });
    await store.insert(session);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 40; i += 1) {
      writes.push(store.update('s1', { status: 'running', updatedAt: i }));
      writes.push(store.update('s1', { status: i === 39 ? 'completed' : 'starting', updatedAt: i, costUsd: i }));
    }
    await Promise.all(writes);
    const stored = await store.get('s1');
    assert.deepEqual([stored?.status, stored?.costUsd], ['completed', 39]);
  });

  test("a run's costs land in the order they were asked for, even when none is awaited before the next", async () => {
    const store = new CodingSessionStore((await fresh()).db);
    const session = storedSession({ id: 's1', name: 'one' });
    await store.insert(session);
    const runId = await store.startRun(session, 'resume', 0);
    const writes: Promise<void>[] = [];
    for (let i = 1; i <= 40; i += 1) writes.push(store.setRunCost(runId, i));
    await Promise.all(writes);
    assert.equal((await store.metrics()).totalCostUsd, 40, 'the last cost asked for is the one kept');
    const late = store.setRunCost(runId, 41);
    const end = store.endRun(runId, 'completed', 42, 1_000);
    const after = store.setRunCost(runId, 1);
    await Promise.all([late, end, after]);
    const metrics = await store.metrics();
    assert.deepEqual([metrics.totalCostUsd, metrics.sessionsByStatus.completed], [42, 1], 'the end is final');
  });

  test('pages newest first, ties broken by id, after a cursor and by status; a page read again shows every write', async () => {
    const { db, dialect } = await fresh();
    const store = new CodingSessionStore(db);
    for (const [id, startedAt, status] of [
      ['a', 1_000, 'completed'],
      ['c', 2_000, 'failed'],
      ['b', 2_000, 'completed'],
      ['d', 2_000, 'failed'],
      ['e', 3_000, 'completed'],
    ] as const) {
      await store.insert(storedSession({ id, name: `n-${id}`, startedAt, status }, { multiTurn: id !== 'e' }));
    }
    const first = await store.page({ limit: 2 });
    assert.deepEqual(
      first.sessions.map((s) => s.id),
      ['e', 'd'],
    );
    assert.deepEqual(first.next, [2_000, 'd']);
    assert.deepEqual(
      first.sessions.map((s) => s.spec),
      [{ multiTurn: false }, { multiTurn: true }],
    );
    const second = await store.page({ limit: 2, after: first.next ?? undefined });
    assert.deepEqual(
      second.sessions.map((s) => s.id),
      ['c', 'b'],
    );
    const last = await store.page({ limit: 2, after: second.next ?? undefined });
    assert.deepEqual([last.sessions.map((s) => s.id), last.next], [['a'], null]);
    const failed = await store.page({ statuses: ['failed'], limit: 1 });
    assert.deepEqual([failed.sessions.map((s) => s.id), failed.next], [['d'], [2_000, 'd']]);
    assert.deepEqual(
      (await store.page({ statuses: ['failed', 'completed'], limit: 10, after: [2_000, 'c'] })).sessions.map(
        (s) => s.id,
      ),
      ['b', 'a'],
    );
    // Served again from the cache on SQLite; PostgreSQL is shared with other nodes, so every page is read anew.
    if (dialect === 'sqlite')
      assert.equal(await store.page({ limit: 2 }), await store.page({ limit: 2 }), 'unchanged: the page read before');
    await store.update('e', { status: 'killed' });
    assert.equal((await store.page({ limit: 2 })).sessions[0]?.status, 'killed');
    await store.delete('e');
    assert.deepEqual(
      (await store.page({ limit: 2 })).sessions.map((s) => s.id),
      ['d', 'c'],
    );
    assert.deepEqual(
      (await store.list(['completed'])).map((s) => s.id),
      ['b', 'a'],
    );
  });

  test('a page read while a write is under way is kept nowhere: the next read shows the write', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    await store.insert(storedSession({ id: 'a', name: 'a', startedAt: 1 }));
    await store.insert(storedSession({ id: 'b', name: 'b', startedAt: 2 }));
    for (const status of ['running', 'failed', 'killed'] as const) {
      await store.page({ limit: 10 });
      const reading = store.page({ limit: 10 });
      const writing = store.update('a', { status });
      await Promise.all([reading, writing]);
      assert.deepEqual(
        (await store.page({ limit: 10 })).sessions.map((s) => [s.id, s.status]),
        [
          ['b', 'starting'],
          ['a', status],
        ],
      );
    }
  });

  test('eviction candidates: finished sessions beyond the newest `keep`, by end time', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    await store.insert(storedSession({ id: 'old', name: 'old', status: 'completed', completedAt: 10, updatedAt: 10 }));
    await store.insert(storedSession({ id: 'mid', name: 'mid', status: 'failed', completedAt: null, updatedAt: 20 }));
    await store.insert(storedSession({ id: 'new', name: 'new', status: 'killed', completedAt: 30, updatedAt: 30 }));
    await store.insert(storedSession({ id: 'live', name: 'live', status: 'running', updatedAt: 1 }));
    assert.deepEqual(await store.evictionCandidates(1), ['mid', 'old']);
    assert.deepEqual(await store.evictionCandidates(5), []);
    await store.delete('old');
    assert.equal(await store.resolve('old'), null, 'its keys went with it');
  });

  test('runs: launched with the session, costed, ended once, crash-cut runs closed; metrics over them', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    const one = storedSession({ id: 's1', name: 'one', prompt: 'the expensive one' });
    const two = storedSession({ id: 's2', name: 'two' });
    const first = await store.insertLaunched(one, T0);
    await store.setRunCost(first, 0.5);
    await store.endRun(first, 'completed', 0.75, T0 + 60_000);
    await store.endRun(first, 'failed', 9, T0 + 120_000);
    await store.insert(two);
    const resumed = await store.startRun(two, 'resume', T0 + DAY);
    await store.setRunCost(resumed, 0.125);
    const open = await store.startRun(one, 'resume', T0 + 2 * DAY);
    assert.notEqual(first, resumed);
    assert.equal(await store.closeOpenRuns(T0 + 2 * DAY + 1_000), 2);
    assert.equal(await store.closeOpenRuns(T0 + 3 * DAY), 0);
    await store.endRun(open, 'completed', 5, T0 + 3 * DAY);
    assert.deepEqual(await store.metrics(), {
      totalCostUsd: 0.875,
      costPerDay: { '2026-01-01': 0.75, '2026-01-03': 0.125 },
      sessionsByStatus: { completed: 1, failed: 0, killed: 0, interrupted: 2, running: 0 },
      totalLaunched: 1,
      averageDurationMs: Math.round((60_000 + (DAY + 1_000) + 1_000) / 3),
      mostExpensive: { id: 's1', name: 'one', costUsd: 0.75, prompt: 'the expensive one' },
    });
  });

  test('metrics of an empty store', async () => {
    const store = new CodingSessionStore((await fresh()).db);
    assert.deepEqual(await store.metrics(), {
      totalCostUsd: 0,
      costPerDay: {},
      sessionsByStatus: { completed: 0, failed: 0, killed: 0, interrupted: 0, running: 0 },
      totalLaunched: 0,
      averageDurationMs: 0,
      mostExpensive: null,
    });
  });

  test('insertLaunched commits the session, its run and `also` together, or none of them', async () => {
    const { db } = await fresh();
    const store = new CodingSessionStore(db);
    await assert.rejects(
      store.insertLaunched(storedSession({ id: 's1', name: 'one' }), T0, () => {
        throw new Error('the answer could not be stored');
      }),
      /could not be stored/,
    );
    assert.equal(await store.get('s1'), null);
    assert.equal((await store.metrics()).totalLaunched, 0);
    await store.insertLaunched(storedSession({ id: 's1', name: 'one' }), T0, async (trx) => {
      await trx.insertInto('restart_notices').values({ session_id: 'x', interrupted_at: 1 }).execute();
    });
    assert.equal((await store.get('s1'))?.name, 'one');
    assert.deepEqual(await new RestartNoticeStore(db).pending(), ['x']);
  });
});

describeEachDatabase('RestartNoticeStore', (fresh) => {
  test('marks a session in the same transaction as its notice; pending oldest first; done clears them', async () => {
    const { db } = await fresh();
    const sessions = new CodingSessionStore(db);
    const notices = new RestartNoticeStore(db);
    for (const id of ['s1', 's2', 's3']) await sessions.insert(storedSession({ id, name: id, status: 'running' }));
    const interrupted = { status: 'interrupted', endReason: 'daemon restarted', pid: null } as const;
    await notices.markWithNotice('s2', 20, (trx) => sessions.update('s2', interrupted, trx));
    await notices.markWithNotice('s1', 20, (trx) => sessions.update('s1', interrupted, trx));
    await notices.markWithNotice('s1', 30, (trx) => sessions.update('s1', interrupted, trx));
    assert.deepEqual(await notices.pending(), ['s1', 's2']);
    await assert.rejects(
      notices.markWithNotice('s3', 40, async (trx) => {
        await sessions.update('s3', interrupted, trx);
        throw new Error('crash between the mark and the notice');
      }),
      /crash between/,
    );
    assert.equal((await sessions.get('s3'))?.status, 'running', 'the mark rolled back with the notice');
    assert.deepEqual(await notices.pending(), ['s1', 's2']);
    assert.equal((await sessions.get('s1'))?.status, 'interrupted');
    await notices.done(['s1']);
    await notices.done([]);
    assert.deepEqual(await notices.pending(), ['s2']);
  });
});

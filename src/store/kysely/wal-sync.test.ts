import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { WalGate } from '../../../test/support/wal-gate.ts';
import { openDatabase } from '../database.ts';
import { closeSqlite, sqliteKysely } from './connection.ts';
import { NODE_WAL_FILE, WalSync, walSyncFor } from './wal-sync.ts';

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('WalSync: commits made durable off the event loop', () => {
  it('callers arriving while a sync runs share the next one, which starts when it ends', async () => {
    const gate = new WalGate();
    const sync = new WalSync('/db-wal', gate.file);
    const done: string[] = [];
    const first = sync.durable().then(() => done.push('first'));
    await gate.syncing();
    const second = sync.durable().then(() => done.push('second'));
    const third = sync.durable().then(() => done.push('third'));
    await settle();
    assert.equal(gate.syncs, 1, 'the later callers do not start a sync of their own while one runs');
    gate.release();
    await first;
    await gate.syncing();
    assert.equal(gate.syncs, 2, 'one more sync for both later callers');
    assert.deepEqual(done, ['first'], 'the later callers wait for the sync that covers their commits');
    gate.release();
    await Promise.all([second, third]);
    assert.deepEqual(done, ['first', 'second', 'third']);
    assert.deepEqual(gate.opened, ['/db-wal'], 'the WAL is opened once');
  });

  it('a failed sync fails its callers, and the next caller syncs again', async () => {
    const gate = new WalGate();
    const sync = new WalSync('/db-wal', gate.file);
    const failing = sync.durable();
    await gate.syncing();
    gate.fail(new Error('EIO'));
    await assert.rejects(failing, /EIO/);
    const next = sync.durable();
    await gate.syncing();
    gate.release();
    await next;
    assert.equal(gate.syncs, 2);
  });

  it('close waits for the sync under way before it closes the file; later callers resolve at once', async () => {
    const gate = new WalGate();
    const sync = new WalSync('/db-wal', gate.file);
    const running = sync.durable();
    await gate.syncing();
    const closing = sync.close();
    await settle();
    assert.equal(gate.closed, 0, 'not closed under a running sync');
    gate.release();
    await Promise.all([running, closing]);
    assert.equal(gate.closed, 1);
    await sync.durable();
    assert.equal(gate.syncs, 1);
  });

  it('syncs nothing for a database in memory (SQLite has no file to sync)', async () => {
    const gate = new WalGate();
    const sync = walSyncFor(openDatabase(':memory:'), gate.file);
    await sync.durable();
    assert.equal(gate.syncs, 0);
  });

  it('a database file runs with synchronous=NORMAL after its migrations, and its WAL is what gets synced', async () => {
    const dir = tempDir('sb-wal-sync-');
    try {
      const path = join(dir.path, 'state.db');
      const db = openDatabase(path);
      assert.equal((db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous, 1);
      assert.equal(
        (openDatabase(':memory:').prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous,
        2,
        'a database in memory keeps FULL',
      );
      const synced: string[] = [];
      const spy = { ...NODE_WAL_FILE, open: (p: string) => (synced.push(p), NODE_WAL_FILE.open(p)) };
      const kysely = sqliteKysely(db, { walFile: spy });
      await kysely.insertInto('linear_claims').values({ key: 'k', owner: 'test', created_at: 1 }).execute();
      assert.deepEqual(synced, [`${path}-wal`]);
      assert.ok(statSync(`${path}-wal`).size > 0);
      await closeSqlite(db);
    } finally {
      dir.remove();
    }
  });
});

describe('SQLite writes through Kysely wait for the WAL sync, and only they do', () => {
  /** A database file whose Kysely syncs through `gate`. */
  function rig(): { gate: WalGate; db: ReturnType<typeof sqliteKysely>; done: () => Promise<void> } {
    const dir = tempDir('sb-wal-writes-');
    const raw = openDatabase(join(dir.path, 'state.db'));
    const gate = new WalGate();
    const db = sqliteKysely(raw, { walFile: gate.file });
    return {
      gate,
      db,
      done: async () => {
        gate.release();
        await closeSqlite(raw);
        dir.remove();
      },
    };
  }
  const claim = (key: string) => ({ key, owner: 'test', created_at: 1 });

  it('a write outside a transaction is answered once its group commit is synced; the event loop runs meanwhile', async () => {
    const r = rig();
    try {
      let answered = false;
      const write = r.db
        .insertInto('linear_claims')
        .values(claim('a'))
        .execute()
        .then(() => (answered = true));
      await r.gate.syncing();
      let timerRan = false;
      await new Promise<void>((resolve) => setTimeout(() => ((timerRan = true), resolve()), 5));
      assert.ok(timerRan);
      assert.equal(answered, false, 'not answered before the sync');
      r.gate.release();
      await write;
    } finally {
      await r.done();
    }
  });

  it('a transaction is answered once synced, and the next one begins and commits while it waits', async () => {
    const r = rig();
    try {
      const order: string[] = [];
      const first = r.db
        .transaction()
        .execute((trx) => trx.insertInto('linear_claims').values(claim('a')).execute())
        .then(() => order.push('first answered'));
      await r.gate.syncing();
      const second = r.db
        .transaction()
        .execute(async (trx) => {
          await trx.insertInto('linear_claims').values(claim('b')).execute();
          order.push('second ran');
        })
        .then(() => order.push('second answered'));
      while (!order.includes('second ran')) await settle();
      assert.deepEqual(order, ['second ran'], 'the first transaction does not hold the connection while it syncs');
      r.gate.release();
      await first;
      await r.gate.syncing();
      r.gate.release();
      await second;
      assert.deepEqual(order, ['second ran', 'first answered', 'second answered']);
    } finally {
      await r.done();
    }
  });

  it('a commit that changed nothing and a relaxed transaction are answered without a sync', async () => {
    const r = rig();
    try {
      const first = r.db.insertInto('linear_claims').values(claim('a')).execute();
      await r.gate.syncing();
      r.gate.release();
      await first;
      const syncs = r.gate.syncs;
      await r.db
        .insertInto('linear_claims')
        .values(claim('a'))
        .onConflict((oc) => oc.doNothing())
        .execute();
      await r.db
        .transaction()
        .execute((trx) => trx.updateTable('linear_claims').set({ owner: 'x' }).where('key', '=', 'none').execute());
      await r.db.transaction().execute(async (trx) => {
        await sql`PRAGMA synchronous = NORMAL`.execute(trx);
        await trx.insertInto('linear_claims').values(claim('b')).execute();
      });
      assert.equal(r.gate.syncs, syncs, 'no sync asked for');
      const rows = await r.db.selectFrom('linear_claims').select('key').orderBy('key').execute();
      assert.deepEqual(
        rows.map((row) => row.key),
        ['a', 'b'],
      );
    } finally {
      await r.done();
    }
  });
});

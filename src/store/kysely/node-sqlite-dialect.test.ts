import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { Kysely, sql } from 'kysely';
import { tempDirPerTest } from '../../../test/support/temp-dir.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { openDatabase } from '../database.ts';
import type { Database } from '../tables/index.ts';
import { sqliteKysely } from './connection.ts';
import { NodeSqliteDialect } from './node-sqlite-dialect.ts';

/** A WAL sync the test finishes by hand: each round waits until `release` (or `fail`) is called. */
function heldSync() {
  const rounds: { resolve: () => void; reject: (error: Error) => void }[] = [];
  return {
    rounds,
    syncOnce: () => new Promise<void>((resolve, reject) => rounds.push({ resolve, reject })),
    release: () => rounds.at(-1)?.resolve(),
    fail: (error: Error) => rounds.at(-1)?.reject(error),
  };
}

/** A promise's state without waiting for it. */
function tracked<T>(promise: Promise<T>) {
  const state: { settled: boolean; error?: unknown } = { settled: false };
  const done = promise.then(
    () => void (state.settled = true),
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return { state, done };
}

describe('NodeSqliteDialect: the WAL sync off the event loop', () => {
  const dir = tempDirPerTest({ prefix: 'sb-dialect-' });

  function open(syncOnce?: () => Promise<void>) {
    const path = join(dir.path, 'state.db');
    const raw = openDatabase(path, { migrations: [] });
    raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    const db = new Kysely<Database>({ dialect: new NodeSqliteDialect(raw, { syncOnce }) });
    const count = () => {
      const other = new DatabaseSync(path);
      try {
        return Number((other.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n);
      } finally {
        other.close();
      }
    };
    return { raw, db, count };
  }

  it('resolves a write committed on its own, and a transaction, only after the WAL sync that follows its commit', async (t) => {
    const held = heldSync();
    const { raw, db, count } = open(held.syncOnce);
    t.after(() => raw.close());

    const write = tracked(sql`INSERT INTO t (v) VALUES ('a')`.execute(db));
    await waitFor('the sync of the first write', () => held.rounds.length === 1);
    assert.equal(count(), 1, 'committed (another connection reads it) before the sync');
    assert.equal(write.state.settled, false, 'not resolved before its sync');
    held.release();
    await write.done;
    assert.equal(write.state.error, undefined);

    const transaction = tracked(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO t (v) VALUES ('b')`.execute(trx);
        await sql`INSERT INTO t (v) VALUES ('c')`.execute(trx);
      }),
    );
    await waitFor('the sync of the transaction', () => held.rounds.length === 2);
    assert.equal(count(), 3);
    assert.equal(transaction.state.settled, false, 'the transaction waits for its sync');
    held.release();
    await transaction.done;
    assert.equal(transaction.state.error, undefined);

    const read = await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(db);
    assert.equal(Number(read.rows[0]?.n), 3);
    assert.equal(held.rounds.length, 2, 'a read syncs nothing');
  });

  it('lets writes and transactions committed while a sync is in flight share the next round, and fails each of a failed round', async (t) => {
    const held = heldSync();
    const { raw, db } = open(held.syncOnce);
    t.after(() => raw.close());

    const first = tracked(sql`INSERT INTO t (v) VALUES ('a')`.execute(db));
    await waitFor('the first round', () => held.rounds.length === 1);
    // The connection is free while the first write's sync is in flight: a write and a transaction commit and wait together.
    const second = tracked(sql`INSERT INTO t (v) VALUES ('b')`.execute(db));
    const third = tracked(db.transaction().execute((trx) => sql`INSERT INTO t (v) VALUES ('c')`.execute(trx)));
    await waitFor(
      'both later writes committed',
      () => Number(raw.prepare('SELECT count(*) AS n FROM t').get()?.n) === 3,
    );
    assert.equal(held.rounds.length, 1, 'the later writes wait for the next round');
    held.release();
    await first.done;
    await waitFor('the second round', () => held.rounds.length === 2);
    assert.equal(second.state.settled, false);
    held.fail(new Error('EIO'));
    await Promise.all([second.done, third.done]);
    assert.match(String(second.state.error), /EIO/);
    assert.match(String(third.state.error), /EIO/);
    assert.equal(held.rounds.length, 2, 'one round for both');
  });

  it('keeps the synchronous level itself: FULL waits for the sync, NORMAL set through Kysely does not', async (t) => {
    const held = heldSync();
    const { raw, db } = open(held.syncOnce);
    t.after(() => raw.close());

    const level = async () =>
      Number((await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(db)).rows[0]?.synchronous);
    assert.equal(await level(), 2, 'FULL as openDatabase set it');
    assert.equal(Number(raw.prepare('PRAGMA synchronous').get()?.synchronous), 1, 'SQLite itself runs at NORMAL');
    await sql`PRAGMA synchronous = NORMAL`.execute(db);
    assert.equal(await level(), 1);
    await sql`INSERT INTO t (v) VALUES ('a')`.execute(db);
    assert.equal(held.rounds.length, 0, 'no sync waited for at NORMAL');
    await sql`PRAGMA synchronous = FULL`.execute(db);
    const write = tracked(sql`INSERT INTO t (v) VALUES ('b')`.execute(db));
    await waitFor('the sync at FULL', () => held.rounds.length === 1);
    held.release();
    await write.done;
  });

  it('leaves an in-memory database to SQLite', async () => {
    const raw = openDatabase(':memory:', { migrations: [] });
    raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    const db = sqliteKysely(raw);
    await sql`INSERT INTO t (v) VALUES ('a')`.execute(db);
    assert.equal(Number(raw.prepare('PRAGMA synchronous').get()?.synchronous), 2);
    raw.close();
  });

  it('checkpoints the WAL in a worker thread as commits pile up (SQLite no longer does it in a commit)', async (t) => {
    const { raw, db } = open();
    t.after(() => raw.close());
    const file = join(dir.path, 'state.db');
    const before = statSync(file).size;
    const payload = 'x'.repeat(2_000);
    for (let i = 0; i < 200; i += 1) await sql`INSERT INTO t (v) VALUES (${payload})`.execute(db);
    assert.ok(
      Number(raw.prepare('PRAGMA wal_autocheckpoint').get()?.wal_autocheckpoint) > 1_000,
      'SQLite checkpoints only far past its default threshold',
    );
    await waitFor('the database file written by a checkpoint', () => statSync(file).size > before);
  });
});

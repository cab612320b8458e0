import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { openDatabase } from '../database.ts';
import { closeSqlite, sqliteKysely } from './connection.ts';

/** A database file, its Kysely, a second connection that sees only what was committed, and a count of COMMITs run. */
function rig(): {
  db: DatabaseSync;
  commits: () => number;
  committedKeys: () => string[];
  done: () => void;
} {
  const dir = tempDir('sb-write-group-');
  const path = join(dir.path, 'state.db');
  const db = openDatabase(path);
  let commits = 0;
  const exec = db.exec.bind(db);
  db.exec = (text: string): void => {
    if (/^\s*commit\b/i.test(text)) commits += 1;
    exec(text);
  };
  const observer = openDatabase(path);
  return {
    db,
    commits: () => commits,
    committedKeys: () =>
      (observer.prepare('SELECT key FROM linear_claims ORDER BY key').all() as { key: string }[]).map((r) => r.key),
    done: () => {
      observer.close();
      if (db.isOpen) closeSqlite(db);
      dir.remove();
    },
  };
}

const claim = (key: string) => ({ key, owner: 'test', created_at: 1 });

describe('WriteGroup: SQLite writes outside a transaction share one commit per turn of the event loop', () => {
  it('writes issued in one turn commit together, once, and none is answered before that commit', async () => {
    const r = rig();
    const db = sqliteKysely(r.db);
    let answered = 0;
    const writes = ['a', 'b', 'c', 'd'].map((key) =>
      db
        .insertInto('linear_claims')
        .values(claim(key))
        .execute()
        .then(() => {
          answered += 1;
        }),
    );
    for (let i = 0; i < 20; i += 1) await Promise.resolve();
    assert.equal(answered, 0, 'no write is answered before its commit');
    assert.deepEqual(r.committedKeys(), [], 'nothing is committed within the turn');
    assert.equal(r.db.isTransaction, true);
    await Promise.all(writes);
    assert.equal(answered, 4);
    assert.equal(r.commits(), 1, 'one commit for the four writes');
    assert.deepEqual(r.committedKeys(), ['a', 'b', 'c', 'd']);
    assert.equal(r.db.isTransaction, false);
    r.done();
  });

  it("a read sees the open group's writes but is answered only after their commit; one after it opens no wait", async () => {
    const r = rig();
    const db = sqliteKysely(r.db);
    const first = db.insertInto('linear_claims').values(claim('a')).execute();
    let committedWhenRead: string[] = [];
    const seen = await db
      .selectFrom('linear_claims')
      .select('key')
      .execute()
      .then((rows) => {
        committedWhenRead = r.committedKeys();
        return rows;
      });
    assert.deepEqual(
      seen.map((row) => row.key),
      ['a'],
    );
    assert.deepEqual(committedWhenRead, ['a'], 'the read was answered after the write it saw committed');
    await first;
    await db.insertInto('linear_claims').values(claim('b')).execute();
    assert.equal(r.commits(), 2);
    assert.deepEqual(r.committedKeys(), ['a', 'b']);
    const before = r.commits();
    const quiet = await db.selectFrom('linear_claims').select('key').execute();
    assert.equal(quiet.length, 2);
    assert.equal(r.commits(), before, 'a read with no group open commits nothing');
    assert.equal(r.db.isTransaction, false);
    r.done();
  });

  it('a failing write fails alone: the rest of its group commits', async () => {
    const r = rig();
    const db = sqliteKysely(r.db);
    await db.insertInto('linear_claims').values(claim('a')).execute();
    const results = await Promise.allSettled([
      db.insertInto('linear_claims').values(claim('b')).execute(),
      db.insertInto('linear_claims').values(claim('a')).execute(),
      db.insertInto('linear_claims').values(claim('c')).execute(),
    ]);
    assert.deepEqual(
      results.map((s) => s.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE constraint failed/);
    assert.deepEqual(r.committedKeys(), ['a', 'b', 'c']);
    r.done();
  });

  it('an explicit transaction and a pragma each commit the open group first; raw writes are grouped too', async () => {
    const r = rig();
    const db = sqliteKysely(r.db);
    const grouped = sql`INSERT INTO linear_claims (key, owner, created_at) VALUES ('a', 'raw', 1)`.execute(db);
    await db.transaction().execute(async (trx) => {
      assert.deepEqual(r.committedKeys(), ['a'], 'the group committed before BEGIN');
      await trx.insertInto('linear_claims').values(claim('b')).execute();
    });
    await grouped;
    assert.deepEqual(r.committedKeys(), ['a', 'b']);
    const again = db.insertInto('linear_claims').values(claim('c')).execute();
    await sql`PRAGMA synchronous = NORMAL`.execute(db);
    assert.deepEqual(r.committedKeys(), ['a', 'b', 'c'], 'the group committed before the pragma');
    await again;
    r.done();
  });

  it('one compiled query run twice waits for its commit each time', async () => {
    const r = rig();
    const db = sqliteKysely(r.db);
    const compiled = CompiledQuery.raw(
      "INSERT INTO linear_claims (key, owner, created_at) VALUES ('a', 'x', 1) ON CONFLICT DO NOTHING",
    );
    let answered = 0;
    const count = (): void => {
      answered += 1;
    };
    const runs = [db.executeQuery(compiled).then(count), db.executeQuery(compiled).then(count)];
    for (let i = 0; i < 20; i += 1) await Promise.resolve();
    assert.equal(answered, 0);
    await Promise.all(runs);
    assert.equal(r.commits(), 1);
    r.done();
  });

  it('closeSqlite commits the open group before closing', async () => {
    const r = rig();
    const db = sqliteKysely(r.db);
    const pending = db.insertInto('linear_claims').values(claim('a')).execute();
    while (!r.db.isTransaction) await Promise.resolve();
    closeSqlite(r.db);
    await pending;
    assert.deepEqual(r.committedKeys(), ['a']);
    r.done();
  });
});

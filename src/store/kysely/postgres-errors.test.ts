// Connections the server ends under a daemon's pool (on a real PostgreSQL): a fenced transaction a frozen holder left
// idle is ended by the server (`idle_in_transaction_session_timeout` set by the fence), and a client killed with
// `pg_terminate_backend` while idle in the pool or checked out in a transaction. The test process is the daemon here:
// an unhandled `'error'` event of a `pg` client would end it, so these tests passing is the proof that none is left.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { TestPostgres } from '../../../test/support/postgres.ts';
import { postgresSkip, startPostgres } from '../../../test/support/postgres.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { ManualClock } from '../../core/clock.ts';
import { createLogger } from '../../core/logger.ts';
import { FencedError, leaseFence } from '../cluster-fence.ts';
import { LeaseStore } from '../cluster-leases.ts';
import { MIGRATIONS } from '../migrations.ts';
import type { Database } from '../tables/index.ts';
import { migratePostgres, openPostgres } from './postgres.ts';

const A = { node: 'a', incarnation: 'a-1' };
const B = { node: 'b', incarnation: 'b-1' };

/** A logger whose lines are kept, to wait for the pool's report of a failed connection. */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger({ level: 'warn', destination }), lines };
}

/** Resolves with this connection's server process id. */
async function backendPid(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
  const pid = rows[0]?.pid;
  if (pid === undefined) throw new Error('no backend pid');
  return pid;
}

/** True once the server has no process `pid` any more. */
async function gone(admin: Kysely<Database>, pid: number): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${pid}`.execute(
    admin,
  );
  return rows[0]?.n === 0;
}

describe('PostgreSQL connections ended by the server', { skip: postgresSkip() }, () => {
  let server: TestPostgres | undefined;
  let admin: Kysely<Database> | undefined;

  before(async () => {
    server = await startPostgres();
    admin = openPostgres({ url: server.url, maxConnections: 2 });
    await migratePostgres(admin, MIGRATIONS, new ManualClock(0));
  });

  after(async () => {
    await admin?.destroy();
    await server?.stop();
  });

  /** A pool of its own on the test database, logging to `lines`. */
  function pool(): { db: Kysely<Database>; lines: string[] } {
    if (!server) throw new Error('no PostgreSQL');
    const { logger, lines } = capturingLogger();
    return { db: openPostgres({ url: server.url, maxConnections: 2, logger }), lines };
  }

  it('ends a fenced transaction left idle past its bound: the taker gets the lease, the stale write fails', async () => {
    if (!admin) throw new Error('no PostgreSQL');
    const { db, lines } = pool();
    const leases = new LeaseStore(admin);
    await leases.releaseAllOf('a');
    await leases.releaseAllOf('b');
    try {
      assert.equal(await leases.acquire('primary', A, 1, 60_000), true);
      const fence = leaseFence({ name: 'primary', ...A, lock: true, idleTimeoutMs: 200 });
      let resume = (): void => {};
      const frozen = new Promise<void>((resolve) => (resume = resolve));
      let checked = (): void => {};
      const inside = new Promise<void>((resolve) => (checked = resolve));
      // The holder takes the fence, then "freezes" (awaits) with the share lock held, idle in its transaction.
      const write = db.transaction().execute(async (trx) => {
        await fence(trx);
        checked();
        await frozen;
        await trx.updateTable('cluster_leases').set({ expires_at: 2 }).where('name', '=', 'primary').execute();
      });
      await inside;
      // The taker (another node's pool) releases the lost node's leases: it waits on the share lock until the server
      // ends the idle transaction, then goes through, and takes the lease.
      assert.equal(await leases.releaseAllOf('a'), 1);
      assert.equal(await leases.acquire('primary', B, 3, 60_000), true);
      await waitFor('the pool to report the ended connection', () =>
        lines.some((line) => line.includes('a PostgreSQL connection failed')),
      );
      // The holder resumes: its transaction is gone, so its write fails and nothing of it is committed.
      resume();
      await assert.rejects(write);
      const { rows } = await sql<{
        holder: string;
        expires_at: number;
      }>`SELECT holder, expires_at FROM cluster_leases WHERE name = 'primary'`.execute(admin);
      assert.deepEqual(
        rows.map((r) => [r.holder, Number(r.expires_at)]),
        [['b', 60_000]],
      );
      // The same pool keeps working (a fresh connection), and its fence now refuses: the lease is B's.
      assert.equal((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows[0]?.one, 1);
      await assert.rejects(
        db.transaction().execute((trx) => fence(trx)),
        FencedError,
      );
    } finally {
      await db.destroy();
    }
  });

  it('bounds only fenced transactions: the setting ends with the transaction', async () => {
    if (!admin) throw new Error('no PostgreSQL');
    const { db } = pool();
    const leases = new LeaseStore(admin);
    await leases.releaseAllOf('a');
    await leases.releaseAllOf('b');
    try {
      assert.equal(await leases.acquire('primary', A, 1, 60_000), true);
      const fence = leaseFence({ name: 'primary', ...A, lock: true, idleTimeoutMs: 1234 });
      const [inside, afterwards] = await db.connection().execute(async (conn) => {
        const during = await conn.transaction().execute(async (trx) => {
          await fence(trx);
          return (
            await sql<{ v: string }>`SELECT current_setting('idle_in_transaction_session_timeout') AS v`.execute(trx)
          ).rows[0]?.v;
        });
        const later = (
          await sql<{ v: string }>`SELECT current_setting('idle_in_transaction_session_timeout') AS v`.execute(conn)
        ).rows[0]?.v;
        return [during, later];
      });
      assert.equal(inside, '1234ms');
      assert.equal(afterwards, '0', 'the connection itself is not bounded');
    } finally {
      await db.destroy();
    }
  });

  it('survives a pool client killed while idle: it is logged and replaced', async () => {
    if (!admin) throw new Error('no PostgreSQL');
    const { db, lines } = pool();
    try {
      const pid = await backendPid(db);
      await sql`SELECT pg_terminate_backend(${pid})`.execute(admin);
      await waitFor('the pool to report the killed idle client', () =>
        lines.some((line) => line.includes('a PostgreSQL connection failed')),
      );
      assert.notEqual(await backendPid(db), pid, 'a new connection serves the next query');
    } finally {
      await db.destroy();
    }
  });

  it('survives a pool client killed while checked out: the transaction rejects and the pool goes on', async () => {
    if (!admin) throw new Error('no PostgreSQL');
    const killer = admin;
    const { db, lines } = pool();
    try {
      let pid = 0;
      const run = db.transaction().execute(async (trx) => {
        pid = await backendPid(trx);
        await sql`SELECT pg_terminate_backend(${pid})`.execute(killer);
        await waitFor('the pool to report the killed client', () =>
          lines.some((line) => line.includes('a PostgreSQL connection failed')),
        );
        await sql`SELECT 1`.execute(trx);
      });
      await assert.rejects(run);
      await waitFor('the killed backend to be gone', () => gone(killer, pid));
      assert.notEqual(await backendPid(db), pid, 'a new connection serves the next query');
    } finally {
      await db.destroy();
    }
  });
});

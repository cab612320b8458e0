// Durable intake on the cluster's store, in one run: (1) signed Linear deliveries through POST /linear/webhook
// (signature check, dedup and queue insert committed before the 200, the worker draining with a no-op handler) with
// the store on PostgreSQL, beside the same on SQLite (WAL, synchronous=FULL), at concurrency 1 and 16; (2) the engine's
// inbox (`acceptUserMessage`: fdatasync'd, and on PostgreSQL each record also committed to `log_records` first) from
// 64 writers, on PostgreSQL and on SQLite. Both beside a bare `INSERT … COMMIT` of a row of the same size on the same
// PostgreSQL server (fsync on) at the same concurrency. Prints figures; asserts nothing.
//   node bench/cluster-intake.ts [deliveries=1000] [concurrency=16] [inbox messages=3000]
import { join } from 'node:path';
import pg from 'pg';
import { systemClock } from '../src/core/clock.ts';
import { silentLogger } from '../src/core/logger.ts';
import { leaseFence } from '../src/store/cluster-fence.ts';
import { LeaseStore } from '../src/store/cluster-leases.ts';
import { LogRecordStore, RecordMirror } from '../src/store/log-records.ts';
import { openStore } from '../src/store/open-store.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { engineInboxRate, INBOX_TEXT } from './support/inbox-writers.ts';
import type { Figures } from './support/intake-driver.ts';
import { IntakeDriver, intakeOn, quantiles, row, signDeliveries } from './support/intake-driver.ts';

const total = Number(process.argv[2] ?? 1000);
const concurrency = Number(process.argv[3] ?? 16);
const inboxMessages = Number(process.argv[4] ?? 3000);
const inboxWriters = 64;
const driver = new IntakeDriver(concurrency);

/** One INSERT of a delivery-sized row per transaction (autocommit) on PostgreSQL, from `parallel` connections. */
async function bareInsertCommit(url: string, count: number, bytes: number, parallel: number): Promise<Figures> {
  const pool = new pg.Pool({ connectionString: url, max: parallel });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_t (id BIGSERIAL PRIMARY KEY, payload TEXT NOT NULL)');
  const payload = 'x'.repeat(bytes);
  const samples: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next += 1;
        const t0 = performance.now();
        await pool.query('INSERT INTO bench_t (payload) VALUES ($1)', [payload]);
        samples.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.end();
  return { perSecond: count / seconds, ...quantiles(samples) };
}

async function main(): Promise<void> {
  const dir = tempDir('sb-bench-cluster-intake-');
  const server = await startPostgres({ durable: true });
  const clock = systemClock();
  const sqlite = await openStore({ maxConnections: 10 }, dir.path, clock);
  const postgres = await openStore({ url: server.url, maxConnections: concurrency }, join(dir.path, 'pg'), clock);
  const onSqlite = await intakeOn(sqlite.db);
  const onPostgres = await intakeOn(postgres.db);
  try {
    // Warm-up (JIT, connections, pages).
    await driver.drive(onSqlite.port, '/linear/webhook', signDeliveries(200), 4);
    await driver.drive(onPostgres.port, '/linear/webhook', signDeliveries(200), 4);
    await bareInsertCommit(server.url, 200, 1000, 4);
    const bytes = Buffer.byteLength(signDeliveries(1)[0]?.body ?? '');
    console.log(`durable webhook intake: ${total} signed deliveries (~${bytes} B each), node ${process.version}`);
    for (const parallel of [1, concurrency]) {
      console.log(`\nconcurrency ${parallel}`);
      const bare = await bareInsertCommit(server.url, total, bytes, parallel);
      console.log(row('bare INSERT … COMMIT on the same PostgreSQL', bare));
      const pgFigures = await driver.drive(onPostgres.port, '/linear/webhook', signDeliveries(total), parallel);
      console.log(row('switchboard /linear/webhook on PostgreSQL', pgFigures));
      console.log(
        row(
          'switchboard /linear/webhook on SQLite',
          await driver.drive(onSqlite.port, '/linear/webhook', signDeliveries(total), parallel),
        ),
      );
      console.log(
        `  PostgreSQL intake: ${(pgFigures.perSecond / bare.perSecond).toFixed(2)}× the bare commits' rate, p50 ${(pgFigures.p50 - bare.p50).toFixed(2)} ms above a bare commit`,
      );
    }
    console.log(`\ndurable inbox: ${inboxMessages} messages over 20 chats from ${inboxWriters} writers`);
    const inbox = { messages: inboxMessages, sessions: 20, concurrency: inboxWriters, fsyncBatchMs: 0 };
    const bareInbox = await bareInsertCommit(server.url, inboxMessages, INBOX_TEXT.length + 200, inboxWriters);
    console.log(row('bare INSERT … COMMIT on the same PostgreSQL', bareInbox));
    const mirror = new RecordMirror({
      store: new LogRecordStore(postgres.db, { notify: true }),
      logger: silentLogger(),
      clock,
      retryMs: 1000,
    });
    const onPg = await engineInboxRate({ ...inbox, dir: join(dir.path, 'inbox-pg'), db: postgres.db, mirror });
    await mirror.close();
    // As the daemon commits them on PostgreSQL: fenced by the `primary` lease (store/cluster-fence.ts).
    const holder = { node: 'bench', incarnation: 'bench-1' };
    await new LeaseStore(postgres.db).acquire('primary', holder, clock.now(), clock.now() + 3_600_000);
    const fencedMirror = new RecordMirror({
      store: new LogRecordStore(postgres.db, {
        notify: true,
        fence: leaseFence({ name: 'primary', ...holder, lock: true }),
      }),
      logger: silentLogger(),
      clock,
      retryMs: 1000,
    });
    const onPgFenced = await engineInboxRate({
      ...inbox,
      dir: join(dir.path, 'inbox-pg-fenced'),
      db: postgres.db,
      mirror: fencedMirror,
    });
    await fencedMirror.close();
    const onLite = await engineInboxRate({ ...inbox, dir: join(dir.path, 'inbox-sqlite'), db: sqlite.db });
    console.log(
      `${'Engine.acceptUserMessage on PostgreSQL (+ log_records)'.padEnd(58)} ${onPg.toFixed(0).padStart(8)} /s`,
    );
    console.log(
      `${'Engine.acceptUserMessage on PostgreSQL, fenced (primary)'.padEnd(58)} ${onPgFenced.toFixed(0).padStart(8)} /s`,
    );
    console.log(`${'Engine.acceptUserMessage on SQLite'.padEnd(58)} ${onLite.toFixed(0).padStart(8)} /s`);
    console.log(`  PostgreSQL inbox: ${(onPg / bareInbox.perSecond).toFixed(2)}× the bare commits' rate`);
  } finally {
    await onSqlite.stop();
    await onPostgres.stop();
    await sqlite.close();
    await postgres.close();
    driver.destroy();
    await server.stop();
    dir.remove();
  }
}

await main();

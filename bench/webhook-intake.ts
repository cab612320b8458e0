// Webhook intake benchmark: deliveries per second and p50/p99 time to the 200 for signed Linear deliveries through
// POST /linear/webhook on a real Fastify instance (signature check, durable dedup + queue insert in SQLite with
// synchronous=FULL, worker draining with a no-op handler), beside a bare node:http handler that only reads the body
// and a bare Fastify route, and two storage baselines (one fdatasync; one unbatched SQLite commit per delivery), in the
// same run, with the targets derived from them. Prints figures; asserts nothing.
//   node bench/webhook-intake.ts [deliveries=2000] [concurrency=16]
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openDatabase } from '../src/store/database.ts';
import { sqliteKysely } from '../src/store/kysely/connection.ts';
import { signLinearWebhook } from '../test/support/linear-webhook-fixtures.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import type { Figures } from './support/intake-driver.ts';
import { IntakeDriver, intakeOn, quantiles, row, signDeliveries } from './support/intake-driver.ts';

const total = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 16);
const driver = new IntakeDriver(concurrency);

/** One append of a delivery-sized record and fdatasync, `count` times. */
function fdatasyncBaseline(path: string, count: number, bytes: number): Figures {
  const fd = openSync(path, 'a');
  const record = Buffer.alloc(bytes, 120);
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    writeSync(fd, record);
    fdatasyncSync(fd);
    samples.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  closeSync(fd);
  return { perSecond: count / seconds, ...quantiles(samples) };
}

/** One INSERT of a delivery-sized row per transaction (same pragmas as the daemon: WAL, synchronous=FULL), `count` times. */
function unbatchedCommitBaseline(path: string, count: number, bytes: number): Figures {
  const db = openDatabase(path, { migrations: [] });
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (payload) VALUES (?)');
  const payload = 'x'.repeat(bytes);
  const samples: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    insert.run(payload);
    samples.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return { perSecond: count / seconds, ...quantiles(samples) };
}

async function main(): Promise<void> {
  const dir = tempDir('sb-bench-webhook-');
  const db = openDatabase(join(dir.path, 'state.db'));
  const intake = await intakeOn(sqliteKysely(db), { bareRoute: true });
  const { webhooks } = intake;
  const fastifyPort = intake.port;

  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  // Idle keep-alive connections are kept as long as Fastify keeps them (72 s): with node:http's 5 s, a connection idle
  // since the previous run (the worker's drain takes seconds) could be closed just as the next run reuses it (ECONNRESET).
  bare.keepAliveTimeout = 72_000;
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const barePort = (bare.address() as AddressInfo).port;

  // Warm-up (JIT, connections, SQLite pages).
  await driver.drive(barePort, '/', signDeliveries(200), 4);
  await driver.drive(fastifyPort, '/bare', signDeliveries(200), 4);
  await driver.drive(fastifyPort, '/linear/webhook', signDeliveries(200), 4);

  const bytes = Buffer.byteLength(signDeliveries(1)[0]?.body ?? '');
  console.log(`webhook intake: ${total} signed deliveries (~${bytes} B each), node ${process.version}`);
  let runs = 0;
  // The storage baselines are measured right before and after each intake run (a shared machine's disk varies).
  const baselines = (): { fsync: Figures; commit: Figures } => {
    runs += 1;
    return {
      fsync: fdatasyncBaseline(join(dir.path, `fdatasync-${runs}.bin`), 300, bytes),
      commit: unbatchedCommitBaseline(join(dir.path, `unbatched-${runs}.db`), 300, bytes),
    };
  };
  const mean = (a: Figures, b: Figures): Figures => ({
    perSecond: (a.perSecond + b.perSecond) / 2,
    p50: (a.p50 + b.p50) / 2,
    p99: (a.p99 + b.p99) / 2,
  });
  for (const parallel of [1, concurrency]) {
    console.log(`\nconcurrency ${parallel}`);
    const before = baselines();
    const bareFigures = await driver.drive(barePort, '/', signDeliveries(total), parallel);
    console.log(row('bare node:http (read body, 200)', bareFigures));
    console.log(row('bare Fastify route', await driver.drive(fastifyPort, '/bare', signDeliveries(total), parallel)));
    const unique = signDeliveries(total);
    const intake = await driver.drive(fastifyPort, '/linear/webhook', unique, parallel);
    console.log(row('switchboard /linear/webhook (new deliveries)', intake));
    const after = baselines();
    const fsync = mean(before.fsync, after.fsync);
    const commit = mean(before.commit, after.commit);
    console.log(row('one fdatasync (append a delivery; mean of before/after)', fsync));
    console.log(row('one unbatched commit per delivery (mean of before/after)', commit));
    if (parallel === 1) {
      const target = bareFigures.p50 + fsync.p50 + 0.3;
      console.log(
        `  target p50 ≤ bare + one fdatasync + 0.3 ms = ${target.toFixed(2)} ms: ${intake.p50 <= target ? 'met' : 'NOT met'}`,
      );
    } else {
      const target = 3 * commit.perSecond;
      console.log(
        `  target ≥ 3 × one unbatched commit per delivery = ${target.toFixed(0)} /s: ${intake.perSecond >= target ? 'met' : 'NOT met'}`,
      );
    }
    await webhooks.worker.idle();
    const replays = unique.map((d) =>
      signLinearWebhook(JSON.parse(d.body) as Record<string, unknown>, { deliveryId: d.deliveryId }),
    );
    console.log(
      row(
        'switchboard /linear/webhook (redeliveries)',
        await driver.drive(fastifyPort, '/linear/webhook', replays, parallel),
      ),
    );
  }
  await webhooks.worker.idle();
  const counts = await webhooks.deliveries.counts();
  console.log(`\nqueue after the run: ${counts.done} done, ${counts.pending} pending, ${counts.dead} dead`);

  await intake.stop();
  await new Promise<void>((resolve) => bare.close(() => resolve()));
  driver.destroy();
  db.close();
  dir.remove();
}

await main();

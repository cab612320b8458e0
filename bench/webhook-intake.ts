// Webhook intake benchmark: deliveries per second and p50/p99 time to the 200 for signed Linear deliveries through
// POST /linear/webhook on a real Fastify instance (signature check, durable dedup + queue insert in SQLite with
// synchronous=FULL, worker draining with a no-op handler), beside a bare node:http handler that only reads the body
// and a bare Fastify route, and two storage baselines (one fdatasync; one unbatched SQLite commit per delivery), in the
// same run, with the targets derived from them. Prints figures; asserts nothing.
//   node bench/webhook-intake.ts [deliveries=2000] [concurrency=16]
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Fastify from 'fastify';
import { systemClock } from '../src/core/clock.ts';
import { linearSchema } from '../src/core/config-linear.ts';
import { silentLogger } from '../src/core/logger.ts';
import { registerLinearRoutes } from '../src/gateway/linear-routes.ts';
import { buildLinearWebhooks } from '../src/linear/webhooks/service.ts';
import { openDatabase } from '../src/store/database.ts';
import { sqliteKysely } from '../src/store/kysely/connection.ts';
import type { SignedDelivery } from '../test/support/linear-webhook-fixtures.ts';
import { linearFixture, signLinearWebhook, TEST_WEBHOOK_SECRET } from '../test/support/linear-webhook-fixtures.ts';
import { tempDir } from '../test/support/temp-dir.ts';

const total = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 16);
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

function post(port: number, path: string, delivery: SignedDelivery): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { ...delivery.headers, 'content-length': Buffer.byteLength(delivery.body) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(delivery.body);
  });
}

interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
}

async function drive(port: number, path: string, deliveries: SignedDelivery[], parallel: number): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++] as SignedDelivery;
      const t0 = performance.now();
      const { status, text } = await post(port, path, delivery);
      latencies.push(performance.now() - t0);
      if (status !== 200) throw new Error(`${path} answered ${status}: ${text}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { perSecond: deliveries.length / seconds, p50: at(0.5), p99: at(0.99) };
}

/** Deliveries of three kinds, each about its own agent session or issue (as in a busy workspace). */
function sign(count: number): SignedDelivery[] {
  const kinds = ['agent-session-prompted', 'comment-create-mention', 'issue-update-delegated'] as const;
  return Array.from({ length: count }, (_, i) => {
    const payload = linearFixture(kinds[i % kinds.length] as (typeof kinds)[number]);
    const id = `bench-${i}-${Math.random().toString(36).slice(2)}`;
    const session = payload.agentSession as Record<string, unknown> | undefined;
    const data = payload.data as Record<string, unknown> | undefined;
    if (session) session.id = id;
    if (data) data[payload.type === 'Issue' ? 'id' : 'issueId'] = id;
    return signLinearWebhook(payload);
  });
}

function quantiles(samples: number[]): { p50: number; p99: number } {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}

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

function row(label: string, f: Figures): string {
  return `${label.padEnd(58)} ${f.perSecond.toFixed(0).padStart(8)} /s   p50 ${f.p50.toFixed(2).padStart(7)} ms   p99 ${f.p99.toFixed(2).padStart(7)} ms`;
}

async function main(): Promise<void> {
  const dir = tempDir('sb-bench-webhook-');
  const db = openDatabase(join(dir.path, 'state.db'));
  const config = linearSchema.parse({ enabled: true });
  const logger = silentLogger();
  const webhooks = buildLinearWebhooks({
    config,
    secret: TEST_WEBHOOK_SECRET,
    db: sqliteKysely(db),
    handler: { handle: async () => {} },
    appUserId: async () => 'app-user',
    clock: systemClock(),
    logger,
  });
  await webhooks.worker.start();
  const app = Fastify();
  await registerLinearRoutes(app, { intake: webhooks.intake, maxBodyBytes: config.webhooks.maxBodyBytes, logger });
  app.post('/bare', async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  const fastifyPort = (app.server.address() as AddressInfo).port;

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
  await drive(barePort, '/', sign(200), 4);
  await drive(fastifyPort, '/bare', sign(200), 4);
  await drive(fastifyPort, '/linear/webhook', sign(200), 4);

  const bytes = Buffer.byteLength(sign(1)[0]?.body ?? '');
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
    const bareFigures = await drive(barePort, '/', sign(total), parallel);
    console.log(row('bare node:http (read body, 200)', bareFigures));
    console.log(row('bare Fastify route', await drive(fastifyPort, '/bare', sign(total), parallel)));
    const unique = sign(total);
    const intake = await drive(fastifyPort, '/linear/webhook', unique, parallel);
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
      row('switchboard /linear/webhook (redeliveries)', await drive(fastifyPort, '/linear/webhook', replays, parallel)),
    );
  }
  await webhooks.worker.idle();
  const counts = await webhooks.deliveries.counts();
  console.log(`\nqueue after the run: ${counts.done} done, ${counts.pending} pending, ${counts.dead} dead`);

  await webhooks.worker.stop();
  await app.close();
  await new Promise<void>((resolve) => bare.close(() => resolve()));
  agent.destroy();
  db.close();
  dir.remove();
}

await main();

// What the intake benches share: posting signed Linear deliveries over keep-alive HTTP from `parallel` lanes and
// reporting deliveries per second with p50/p99 time to the answer, and one printed row per figure.
import { Agent, request } from 'node:http';
import Fastify from 'fastify';
import type { Kysely } from 'kysely';
import { systemClock } from '../../src/core/clock.ts';
import { linearSchema } from '../../src/core/config-linear.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { registerLinearRoutes } from '../../src/gateway/linear-routes.ts';
import { buildLinearWebhooks } from '../../src/linear/webhooks/service.ts';
import type { Database } from '../../src/store/tables/index.ts';
import type { SignedDelivery } from '../../test/support/linear-webhook-fixtures.ts';
import { linearFixture, signLinearWebhook, TEST_WEBHOOK_SECRET } from '../../test/support/linear-webhook-fixtures.ts';

/** Throughput and latency of one run. */
export interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
}

/** p50 and p99 of `samples` (sorted in place). */
export function quantiles(samples: number[]): { p50: number; p99: number } {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}

/** One printed line: label, per second, p50, p99. */
export function row(label: string, f: Figures): string {
  return `${label.padEnd(58)} ${f.perSecond.toFixed(0).padStart(8)} /s   p50 ${f.p50.toFixed(2).padStart(7)} ms   p99 ${f.p99.toFixed(2).padStart(7)} ms`;
}

/** `count` signed deliveries of three kinds, each about its own agent session or issue (as in a busy workspace). */
export function signDeliveries(count: number): SignedDelivery[] {
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

/** Posts deliveries to one server over keep-alive connections (at most `maxSockets` at once). */
export class IntakeDriver {
  readonly #agent: Agent;

  constructor(maxSockets: number) {
    this.#agent = new Agent({ keepAlive: true, maxSockets });
  }

  /** Posts one delivery; resolves with the status and body. */
  post(port: number, path: string, delivery: SignedDelivery): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          agent: this.#agent,
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

  /** Posts every delivery from `parallel` lanes; throws on any answer but 200. */
  async drive(port: number, path: string, deliveries: SignedDelivery[], parallel: number): Promise<Figures> {
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    const lane = async () => {
      while (next < deliveries.length) {
        const delivery = deliveries[next++] as SignedDelivery;
        const t0 = performance.now();
        const { status, text } = await this.post(port, path, delivery);
        latencies.push(performance.now() - t0);
        if (status !== 200) throw new Error(`${path} answered ${status}: ${text}`);
      }
    };
    await Promise.all(Array.from({ length: parallel }, lane));
    const seconds = (performance.now() - started) / 1000;
    return { perSecond: deliveries.length / seconds, ...quantiles(latencies) };
  }

  /** Closes the kept-alive connections. */
  destroy(): void {
    this.#agent.destroy();
  }
}

/** A running Linear webhook intake for the benches. */
export interface BenchIntake {
  port: number;
  webhooks: ReturnType<typeof buildLinearWebhooks>;
  /** Waits for the worker to drain, then stops it and the server. */
  stop: () => Promise<void>;
}

/**
 * A Fastify gateway with the Linear webhook route over `db` (the worker draining with a no-op handler), and with
 * `bareRoute` a bare `POST /bare` beside it in the same server; resolves once it listens.
 */
export async function intakeOn(db: Kysely<Database>, options: { bareRoute?: boolean } = {}): Promise<BenchIntake> {
  const config = linearSchema.parse({ enabled: true });
  const logger = silentLogger();
  const webhooks = buildLinearWebhooks({
    config,
    secret: TEST_WEBHOOK_SECRET,
    db,
    handler: { handle: async () => {} },
    appUserId: async () => 'app-user',
    clock: systemClock(),
    logger,
  });
  await webhooks.worker.start();
  const app = Fastify();
  await registerLinearRoutes(app, { intake: webhooks.intake, maxBodyBytes: config.webhooks.maxBodyBytes, logger });
  if (options.bareRoute) app.post('/bare', async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    webhooks,
    stop: async () => {
      await webhooks.worker.idle();
      await webhooks.worker.stop();
      await app.close();
    },
  };
}

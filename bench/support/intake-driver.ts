// What the intake benches share: posting signed Linear deliveries over keep-alive HTTP from `parallel` lanes (in a
// client thread of their own) and reporting deliveries per second with p50/p99 time to the answer, and one printed
// row per figure.
import { Worker } from 'node:worker_threads';
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
import type { DriveAnswer, DriveRequest } from './intake-client.ts';

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

/**
 * Posts deliveries to one server over keep-alive connections (at most `maxSockets` at once) from a client in a worker
 * thread of its own (bench/support/intake-client.ts), so that the client's HTTP work is not counted against the server.
 */
export class IntakeDriver {
  readonly #worker = new Worker(new URL('./intake-client.ts', import.meta.url));
  readonly #waiting = new Map<number, (answer: DriveAnswer) => void>();
  readonly #maxSockets: number;
  #next = 0;

  constructor(maxSockets: number) {
    this.#maxSockets = maxSockets;
    this.#worker.on('message', (answer: DriveAnswer) => {
      this.#waiting.get(answer.id)?.(answer);
      this.#waiting.delete(answer.id);
    });
  }

  /** Posts every delivery from `parallel` lanes; throws on any answer but 200. */
  async drive(port: number, path: string, deliveries: SignedDelivery[], parallel: number): Promise<Figures> {
    const id = (this.#next += 1);
    const answer = await new Promise<DriveAnswer>((resolve) => {
      this.#waiting.set(id, resolve);
      const ask: DriveRequest = { id, port, path, deliveries, parallel, maxSockets: this.#maxSockets };
      this.#worker.postMessage(ask);
    });
    if (!answer.ok) throw new Error(answer.error);
    return { perSecond: deliveries.length / answer.seconds, ...quantiles(answer.latencies) };
  }

  /** Ends the client thread (and its kept-alive connections). */
  destroy(): void {
    void this.#worker.terminate();
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

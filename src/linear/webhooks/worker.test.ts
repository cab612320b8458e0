import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { FAKE_IDS } from '../../../test/support/fake-linear-workspace.ts';
import type { LinearFixtureName } from '../../../test/support/linear-webhook-fixtures.ts';
import { linearFixture } from '../../../test/support/linear-webhook-fixtures.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { ManualClock } from '../../core/clock.ts';
import { linearWebhooksSchema } from '../../core/config-linear.ts';
import type { Logger } from '../../core/logger.ts';
import { createLogger, silentLogger } from '../../core/logger.ts';
import { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import type { LinearEvent, LinearEventHandler } from './events.ts';
import { orderKey } from './verify.ts';
import { WebhookWorker } from './worker.ts';

async function setup(options: {
  handler: LinearEventHandler;
  maxAttempts?: number;
  concurrency?: number;
  logger?: Logger;
  batchMs?: number;
  intakeCommitting?: () => Promise<void> | undefined;
}) {
  const clock = new ManualClock();
  const store = new LinearDeliveryStore((await openTestStore(':memory:')).db);
  const webhooks = linearWebhooksSchema.parse({
    maxAttempts: options.maxAttempts ?? 3,
    retryInitialMs: 1_000,
    retryMaxMs: 10_000,
    concurrency: options.concurrency ?? 4,
    batchMs: options.batchMs ?? 0,
  });
  const worker = new WebhookWorker({
    store,
    handler: options.handler,
    appUserId: async () => FAKE_IDS.appUser,
    clock,
    logger: options.logger ?? silentLogger(),
    webhooks,
    ...(options.intakeCommitting ? { intakeCommitting: options.intakeCommitting } : {}),
  });
  let n = 0;
  const enqueue = async (name: LinearFixtureName, patch: (p: Record<string, unknown>) => void = () => {}) => {
    const payload = linearFixture(name);
    patch(payload);
    n += 1;
    const deliveryId = `delivery-${n}`;
    await store.enqueue({
      deliveryId,
      eventType: String(payload.type),
      action: String(payload.action),
      orderKey: orderKey(payload, deliveryId),
      payload: JSON.stringify(payload),
      bodyDigest: deliveryId,
      receivedAt: clock.now(),
    });
    return deliveryId;
  };
  return { clock, store, worker, enqueue };
}

describe('WebhookWorker', () => {
  it('lets a group commit of the intake that is under way answer its deliveries before a turn claims', async () => {
    let release: () => void = () => undefined;
    let committing: Promise<void> | undefined = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const handled: string[] = [];
    const { worker, enqueue } = await setup({
      handler: {
        async handle(event) {
          handled.push(event.type);
        },
      },
      intakeCommitting: () => ((asked += 1), committing),
    });
    await enqueue('issue-update-delegated');
    await worker.start();
    await waitFor('a turn to ask about the intake commit', () => asked > 0);
    assert.deepEqual(handled, [], 'no claim while the intake’s commit is under way');
    committing = undefined;
    release();
    await worker.idle();
    assert.equal(handled.length, 1);
    await worker.stop();
  });

  it('retries a failing handler with backoff on the clock, counting attempts, until it succeeds', async () => {
    let calls = 0;
    const { clock, store, worker, enqueue } = await setup({
      handler: {
        async handle() {
          calls += 1;
          if (calls < 3) throw new Error(`pipeline busy (${calls})`);
        },
      },
    });
    const id = await enqueue('issue-update-delegated');
    await worker.start();
    await worker.idle();
    assert.equal(calls, 1);
    assert.equal((await store.get(id))?.status, 'pending');
    assert.equal((await store.get(id))?.lastError, 'pipeline busy (1)');
    clock.advance(999);
    await worker.idle();
    assert.equal(calls, 1, 'not before the backoff');
    clock.advance(1);
    await worker.idle();
    assert.equal(calls, 2);
    clock.advance(2_000);
    await worker.idle();
    assert.equal(calls, 3);
    const done = await store.get(id);
    assert.equal(done?.status, 'done');
    assert.equal(done?.attempts, 3);
    assert.equal(done?.outcome, 'handled: issue.assigned');
    await worker.stop();
  });

  it("gathers what is queued within batchMs into one turn (one claim for all), off the intake's path", async () => {
    const seen: string[] = [];
    const { clock, store, worker, enqueue } = await setup({
      handler: { handle: async (event) => void seen.push(event.deliveryId) },
      batchMs: 10,
    });
    await worker.start();
    await worker.idle();
    const a = await enqueue('issue-update-delegated', (p) => ((p.data as Record<string, unknown>).id = 'issue-a'));
    worker.notify();
    const b = await enqueue('issue-update-delegated', (p) => ((p.data as Record<string, unknown>).id = 'issue-b'));
    worker.notify();
    // The window's timer is armed by notify(): nothing can be handled before the clock moves.
    assert.deepEqual(seen, [], 'nothing before the window ends');
    assert.equal((await store.get(a))?.status, 'pending');
    clock.advance(10);
    await waitFor('the turn to hand both over', () => seen.length === 2);
    assert.deepEqual(seen.sort(), [a, b].sort(), 'both in one turn');
    assert.equal((await store.get(a))?.attempts, 1);
    // The next window records both (its timer is armed once both handlers returned).
    await waitFor('both recorded done', async () => {
      clock.advance(10);
      return (await store.get(a))?.status === 'done' && (await store.get(b))?.status === 'done';
    });
    await worker.stop();
  });

  it('dead-letters a delivery after maxAttempts and logs it', async () => {
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n')));
    const { clock, store, worker, enqueue } = await setup({
      maxAttempts: 2,
      logger: createLogger({ level: 'info', destination: sink }),
      handler: { handle: async () => Promise.reject(new Error('always broken')) },
    });
    const id = await enqueue('comment-create-mention');
    await worker.start();
    await worker.idle();
    clock.advance(1_000);
    await worker.idle();
    assert.equal((await store.get(id))?.status, 'dead');
    assert.equal((await store.get(id))?.attempts, 2);
    assert.deepEqual(
      (await store.deadLetters()).map((d) => d.deliveryId),
      [id],
    );
    clock.advance(60_000);
    await worker.idle();
    assert.equal((await store.get(id))?.attempts, 2, 'a dead delivery is not retried');
    const dead = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'linear webhook dead-lettered');
    assert.equal(dead?.delivery, id);
    assert.equal(dead?.err, 'always broken');
    assert.equal(await store.retryDead(id, clock.now()), true);
    assert.equal((await store.get(id))?.status, 'pending');
    await worker.stop();
  });

  it('dead-letters a malformed payload at once, and acknowledges ignored ones as done', async () => {
    const handled: LinearEvent[] = [];
    const { store, worker, enqueue } = await setup({ handler: { handle: async (e) => void handled.push(e) } });
    const broken = await enqueue('agent-session-created', (p) => delete (p.agentSession as Record<string, unknown>).id);
    const unknown = await enqueue('issue-create', (p) => (p.type = 'Cycle'));
    await worker.start();
    await worker.idle();
    assert.equal((await store.get(broken))?.status, 'dead');
    assert.equal((await store.get(broken))?.attempts, 1);
    assert.equal((await store.get(unknown))?.status, 'done');
    assert.match((await store.get(unknown))?.outcome ?? '', /^ignored: webhook type Cycle/);
    assert.equal(handled.length, 0);
    await worker.stop();
  });

  it('hands over deliveries of one agent session one at a time, in order, while other issues proceed', async () => {
    const started: string[] = [];
    const releases = new Map<string, () => void>();
    const { worker, enqueue } = await setup({
      handler: {
        handle(event) {
          started.push(`${event.type}:${event.deliveryId}`);
          return new Promise<void>((resolve) => releases.set(event.deliveryId, resolve));
        },
      },
    });
    const created = await enqueue('agent-session-created');
    const prompted = await enqueue('agent-session-prompted');
    const other = await enqueue('issue-create');
    await worker.start();
    await waitFor('the first two handed over', () => started.length >= 2);
    assert.deepEqual(started, [`agentSession.created:${created}`, `issue.created:${other}`]);
    releases.get(created)?.();
    await waitFor('the next of the session handed over', () => started.length >= 3);
    assert.deepEqual(started.slice(2), [`agentSession.prompted:${prompted}`]);
    releases.get(prompted)?.();
    releases.get(other)?.();
    await worker.idle();
    await worker.stop();
  });

  it('resumes a delivery left processing by a crashed process (at least once)', async () => {
    const handled: string[] = [];
    const { clock, store, worker, enqueue } = await setup({
      handler: { handle: async (e) => void handled.push(e.deliveryId) },
    });
    const id = await enqueue('agent-session-stop');
    assert.equal((await store.claimNext(clock.now()))?.deliveryId, id, 'a previous process took it');
    assert.equal((await store.get(id))?.status, 'processing');
    await worker.start();
    await worker.idle();
    assert.deepEqual(handled, [id]);
    assert.equal((await store.get(id))?.attempts, 2);
    await worker.stop();
  });

  it('stops within stopGraceMs even when a handler hangs; the delivery runs again at the next start', async () => {
    let calls = 0;
    const { clock, store, worker, enqueue } = await setup({
      handler: { handle: () => ((calls += 1), new Promise<void>(() => {})) },
    });
    const id = await enqueue('agent-session-created');
    await worker.start();
    await waitFor('the handler to be called', () => calls === 1);
    const stopped = worker.stop();
    clock.advance(10_000);
    await stopped;
    assert.equal((await store.get(id))?.status, 'processing');
    const next = new WebhookWorker({
      store,
      handler: { handle: async () => void (calls += 1) },
      appUserId: async () => FAKE_IDS.appUser,
      clock,
      logger: silentLogger(),
      webhooks: linearWebhooksSchema.parse({ batchMs: 0 }),
    });
    await next.start();
    await next.idle();
    assert.equal((await store.get(id))?.status, 'done');
    assert.equal(calls, 2);
    await next.stop();
  });

  it('prunes finished deliveries after the retention period', async () => {
    const { clock, store, worker, enqueue } = await setup({ handler: { handle: async () => {} } });
    const id = await enqueue('issue-create');
    await worker.start();
    await worker.idle();
    assert.equal((await store.get(id))?.status, 'done');
    clock.advance(7 * 24 * 3_600_000 + 3_600_000);
    // The prune timer's work is not the loop's: wait for its delete to commit.
    await waitFor('the delivery pruned', async () => (await store.get(id)) === undefined);
    await worker.stop();
  });
});

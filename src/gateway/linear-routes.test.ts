import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { FAKE_IDS } from '../../test/support/fake-linear-workspace.ts';
import { linearFixture, signLinearWebhook, TEST_WEBHOOK_SECRET } from '../../test/support/linear-webhook-fixtures.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import type { TestStore } from '../../test/support/test-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { systemClock } from '../core/clock.ts';
import { linearSchema } from '../core/config-linear.ts';
import { silentLogger } from '../core/logger.ts';
import type { LinearEvent, LinearEventHandler } from '../linear/webhooks/events.ts';
import type { LinearWebhooks } from '../linear/webhooks/service.ts';
import { buildLinearWebhooks } from '../linear/webhooks/service.ts';
import { registerLinearRoutes } from './linear-routes.ts';

class RecordingHandler implements LinearEventHandler {
  events: LinearEvent[] = [];
  async handle(event: LinearEvent): Promise<void> {
    this.events.push(event);
  }
}

interface Daemon {
  store: TestStore;
  app: FastifyInstance;
  url: string;
  webhooks: LinearWebhooks;
  handler: RecordingHandler;
}

describe('Linear webhook routes', () => {
  let dir: ReturnType<typeof tempDir>;
  let running: Daemon[] = [];

  beforeEach(() => {
    dir = tempDir('sb-linear-routes-');
    running = [];
  });
  afterEach(async () => {
    for (const d of running) await stop(d);
    dir.remove();
  });

  /** A daemon-like assembly: the test's database for a file in `dir`, a Fastify app with the Linear routes, a worker (started or not). */
  async function start(options: { startWorker?: boolean; maxBodyBytes?: number } = {}): Promise<Daemon> {
    const config = linearSchema.parse({
      enabled: true,
      webhooks: { maxBodyBytes: options.maxBodyBytes ?? 1_048_576, retryInitialMs: 10 },
    });
    const store = await openTestStore(join(dir.path, 'switchboard.db'));
    const handler = new RecordingHandler();
    const logger = silentLogger();
    const webhooks = buildLinearWebhooks({
      config,
      secret: TEST_WEBHOOK_SECRET,
      db: store.db,
      handler,
      appUserId: async () => FAKE_IDS.appUser,
      clock: systemClock(),
      logger,
    });
    const app = Fastify();
    app.post('/json-echo', async (request) => ({ got: request.body }));
    await registerLinearRoutes(app, { intake: webhooks.intake, maxBodyBytes: config.webhooks.maxBodyBytes, logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    if (options.startWorker !== false) await webhooks.worker.start();
    const daemon = { store, app, url, webhooks, handler };
    running.push(daemon);
    return daemon;
  }

  async function stop(d: Daemon): Promise<void> {
    if (!running.includes(d)) return;
    running = running.filter((x) => x !== d);
    await d.webhooks.worker.stop();
    await d.app.close();
    await d.store.close();
  }

  async function post(
    d: Daemon,
    body: string,
    headers: Record<string, string>,
    path = '/linear/webhook',
  ): Promise<{ status: number; text: string }> {
    const response = await fetch(`${d.url}${path}`, { method: 'POST', headers, body });
    return { status: response.status, text: await response.text() };
  }

  it('accepts a signed delivery, queues it before answering 200, and hands the event to the handler', async () => {
    const d = await start();
    const signed = signLinearWebhook(linearFixture('agent-session-created'));
    const response = await post(d, signed.body, signed.headers);
    assert.equal(response.status, 200);
    assert.equal((await d.webhooks.deliveries.get(signed.deliveryId))?.eventType, 'AgentSessionEvent');
    await d.webhooks.worker.idle();
    assert.equal(d.handler.events.length, 1);
    assert.equal(d.handler.events[0]?.type, 'agentSession.created');
    assert.equal(d.handler.events[0]?.deliveryId, signed.deliveryId);
    assert.equal((await d.webhooks.deliveries.get(signed.deliveryId))?.status, 'done');
  });

  it('serves the back-compat path /hooks/linear with the same handler', async () => {
    const d = await start();
    const signed = signLinearWebhook(linearFixture('comment-create-mention'));
    assert.equal((await post(d, signed.body, signed.headers, '/hooks/linear')).status, 200);
    await d.webhooks.worker.idle();
    assert.equal(d.handler.events[0]?.type, 'comment.created');
  });

  it('refuses a forged signature with 401 and queues nothing', async () => {
    const d = await start();
    const forged = signLinearWebhook(linearFixture('issue-update-delegated'), { secret: 'not-the-secret' });
    assert.equal((await post(d, forged.body, forged.headers)).status, 401);
    const tampered = signLinearWebhook(linearFixture('issue-update-delegated'));
    assert.equal((await post(d, tampered.body.replace('Add audit log', 'rm -rf /'), tampered.headers)).status, 401);
    const unsigned = signLinearWebhook(linearFixture('issue-update-delegated'));
    const { 'linear-signature': _, ...noSignature } = unsigned.headers;
    assert.equal((await post(d, unsigned.body, noSignature)).status, 401);
    assert.deepEqual(await d.webhooks.deliveries.counts(), { pending: 0, processing: 0, done: 0, dead: 0 });
    await d.webhooks.worker.idle();
    assert.equal(d.handler.events.length, 0);
  });

  it('refuses a stale or future webhookTimestamp with 400 and a body that is not JSON with 400', async () => {
    const d = await start();
    const stale = signLinearWebhook(linearFixture('issue-create'), { timestamp: Date.now() - 5 * 60_000 });
    const staleAnswer = await post(d, stale.body, stale.headers);
    assert.equal(staleAnswer.status, 400);
    assert.match(staleAnswer.text, /webhookTimestamp/);
    const future = signLinearWebhook(linearFixture('issue-create'), { timestamp: Date.now() + 5 * 60_000 });
    assert.equal((await post(d, future.body, future.headers)).status, 400);
    const { createHmac } = await import('node:crypto');
    const notJson = 'type=Issue&action=create';
    const sig = createHmac('sha256', TEST_WEBHOOK_SECRET).update(notJson).digest('hex');
    const notJsonAnswer = await post(d, notJson, {
      'content-type': 'application/x-www-form-urlencoded',
      'linear-signature': sig,
    });
    assert.equal(notJsonAnswer.status, 400);
    assert.match(notJsonAnswer.text, /not JSON/);
    assert.equal((await d.webhooks.deliveries.counts()).pending + (await d.webhooks.deliveries.counts()).done, 0);
  });

  it('acknowledges a replayed delivery id with 200 but processes it once, also after the store is reopened', async () => {
    const first = await start();
    const signed = signLinearWebhook(linearFixture('issue-update-delegated'));
    assert.equal((await post(first, signed.body, signed.headers)).status, 200);
    const again = signLinearWebhook(linearFixture('issue-update-delegated'), { deliveryId: signed.deliveryId });
    const duplicate = await post(first, again.body, again.headers);
    assert.equal(duplicate.status, 200);
    await first.webhooks.worker.idle();
    assert.equal(first.handler.events.length, 1);
    await stop(first);

    const second = await start();
    const afterRestart = signLinearWebhook(linearFixture('issue-update-delegated'), { deliveryId: signed.deliveryId });
    assert.equal((await post(second, afterRestart.body, afterRestart.headers)).status, 200);
    await second.webhooks.worker.idle();
    assert.equal(second.handler.events.length, 0);
    assert.equal((await second.webhooks.deliveries.counts()).done, 1);
  });

  it('commits concurrent deliveries together and stores a delivery id sent twice at once only once', async () => {
    const d = await start();
    const signed = signLinearWebhook(linearFixture('agent-session-stop'));
    const others = [
      signLinearWebhook(linearFixture('issue-create')),
      signLinearWebhook(linearFixture('comment-create-mention')),
    ];
    const answers = await Promise.all([signed, signed, signed, ...others].map((s) => post(d, s.body, s.headers)));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200],
    );
    await d.webhooks.worker.idle();
    assert.deepEqual(d.handler.events.map((e) => e.type).sort(), [
      'agentSession.stop',
      'comment.created',
      'issue.created',
    ]);
  });

  it('answers 503 when the delivery cannot be stored, so that Linear delivers again', async () => {
    const d = await start({ startWorker: false });
    await sql`DROP TABLE linear_webhook_deliveries`.execute(d.store.db);
    const signed = signLinearWebhook(linearFixture('issue-create'));
    assert.equal((await post(d, signed.body, signed.headers)).status, 503);
  });

  it('deduplicates by payload when there is no linear-delivery header (webhookId alone names the webhook, not the delivery)', async () => {
    const d = await start();
    const one = signLinearWebhook(linearFixture('issue-create'), { deliveryId: null });
    const redelivered = signLinearWebhook(linearFixture('issue-create'), {
      deliveryId: null,
      timestamp: Date.now() + 1000,
    });
    const other = signLinearWebhook(linearFixture('comment-create-mention'), { deliveryId: null });
    for (const s of [one, redelivered, other]) assert.equal((await post(d, s.body, s.headers)).status, 200);
    await d.webhooks.worker.idle();
    assert.deepEqual(d.handler.events.map((e) => e.type).sort(), ['comment.created', 'issue.created']);
  });

  it('takes in a signed body nested 5,000 levels deep without a linear-delivery header (200, never a 500), and handles it', async () => {
    const d = await start();
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const payload = linearFixture('agent-session-prompted') as {
      agentActivity: { content: Record<string, unknown> };
    } & Record<string, unknown>;
    payload.agentActivity.content.extra = '__DEEP__';
    payload.extra = '__DEEP__';
    const signed = signLinearWebhook(payload, { deliveryId: null });
    const body = signed.body.replaceAll('"__DEEP__"', deep);
    const { createHmac } = await import('node:crypto');
    const headers = {
      ...signed.headers,
      'linear-signature': createHmac('sha256', TEST_WEBHOOK_SECRET).update(body).digest('hex'),
    };
    const answer = await post(d, body, headers);
    assert.equal(answer.status, 200, answer.text);
    assert.equal((await post(d, body, headers)).status, 200, 'the same bytes again: a redelivery');
    // Deep nesting where the handlers read loosely typed fields (updatedFrom, data) of an Issue update.
    const issue = linearFixture('issue-update-delegated') as {
      updatedFrom: Record<string, unknown>;
      data: Record<string, unknown>;
    } & Record<string, unknown>;
    issue.updatedFrom.labelIds = '__DEEP__';
    issue.data.extra = '__DEEP__';
    const signedIssue = signLinearWebhook(issue, { deliveryId: null });
    const issueBody = signedIssue.body.replaceAll('"__DEEP__"', deep);
    const issueHeaders = {
      ...signedIssue.headers,
      'linear-signature': createHmac('sha256', TEST_WEBHOOK_SECRET).update(issueBody).digest('hex'),
    };
    assert.equal((await post(d, issueBody, issueHeaders)).status, 200);
    await d.webhooks.worker.idle();
    assert.deepEqual(
      d.handler.events.map((e) => e.type),
      ['agentSession.prompted', 'issue.assigned'],
    );
    assert.deepEqual(await d.webhooks.deliveries.counts(), { pending: 0, processing: 0, done: 2, dead: 0 });
  });

  it('treats the same signed body re-sent under a new linear-delivery id (the header is not signed) as a redelivery', async () => {
    const d = await start();
    const signed = signLinearWebhook(linearFixture('agent-session-created'));
    assert.equal((await post(d, signed.body, signed.headers)).status, 200);
    const replayed = await post(d, signed.body, { ...signed.headers, 'linear-delivery': 'a-brand-new-delivery-id' });
    assert.equal(replayed.status, 200);
    await d.webhooks.worker.idle();
    assert.equal(d.handler.events.length, 1);
    assert.equal(await d.webhooks.deliveries.get('a-brand-new-delivery-id'), undefined);
    // Two replays arriving together under two new ids are not stored either.
    const both = await Promise.all(
      ['x-1', 'x-2'].map((id) => post(d, signed.body, { ...signed.headers, 'linear-delivery': id })),
    );
    assert.deepEqual(
      both.map((b) => b.status),
      [200, 200],
    );
    await d.webhooks.worker.idle();
    assert.equal(d.handler.events.length, 1);
    assert.equal((await d.webhooks.deliveries.counts()).done, 1);
  });

  it('works off deliveries accepted before a restart (queued durably, worker not yet run)', async () => {
    const first = await start({ startWorker: false });
    const deliveries = [
      signLinearWebhook(linearFixture('agent-session-created')),
      signLinearWebhook(linearFixture('agent-session-prompted')),
    ];
    for (const s of deliveries) assert.equal((await post(first, s.body, s.headers)).status, 200);
    assert.equal(first.handler.events.length, 0);
    await stop(first);

    const second = await start();
    await second.webhooks.worker.idle();
    assert.deepEqual(
      second.handler.events.map((e) => e.type),
      ['agentSession.created', 'agentSession.prompted'],
    );
  });

  it('limits the body size (413) and leaves other routes their JSON parser', async () => {
    const d = await start({ maxBodyBytes: 2048 });
    const big = linearFixture('issue-create') as { data: Record<string, unknown> };
    big.data.description = 'x'.repeat(4096);
    const signed = signLinearWebhook(big);
    assert.equal((await post(d, signed.body, signed.headers)).status, 413);
    const echo = await fetch(`${d.url}/json-echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.deepEqual(await echo.json(), { got: { a: 1 } });
  });
});

// POST /github/webhook on a real Fastify server and the test's database (a real SQLite file, or PostgreSQL with
// TEST_DATABASE=postgres): forged deliveries refused before parsing, valid ones stored before the 200, redeliveries
// acknowledged and processed once, the queue drained after a restart.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import { reviewPayload, sendGithubWebhook } from '../../test/support/fake-github.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import type { TestStore } from '../../test/support/test-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { systemClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import type { GithubEvent } from '../github/webhooks/events.ts';
import { GithubWebhookIntake } from '../github/webhooks/intake.ts';
import { GithubWebhookWorker } from '../github/webhooks/worker.ts';
import { GithubDeliveryStore } from '../store/github-deliveries.ts';
import { registerGithubRoutes } from './github-routes.ts';

const SECRET = 'webhook-secret';

describe('GitHub webhook route', () => {
  let dir: ReturnType<typeof tempDir>;
  let apps: FastifyInstance[] = [];
  let workers: GithubWebhookWorker[] = [];
  let databases: TestStore[] = [];

  beforeEach(() => {
    dir = tempDir('sb-github-routes-');
  });
  afterEach(async () => {
    for (const w of workers) await w.stop();
    for (const a of apps) await a.close();
    for (const d of databases) await d.close();
    apps = [];
    workers = [];
    databases = [];
    dir.remove();
  });

  /** A gateway with the route; `work: false` leaves the worker stopped (deliveries stay queued). */
  async function serve(work = true) {
    const database = await openTestStore(join(dir.path, 'state.db'));
    databases.push(database);
    const store = new GithubDeliveryStore(database.db);
    const handled: GithubEvent[] = [];
    const clock = systemClock();
    const worker = new GithubWebhookWorker({
      store,
      clock,
      logger: silentLogger(),
      handler: (event) => {
        handled.push(event);
        return Promise.resolve(`handled ${event.kind}`);
      },
    });
    const intake = new GithubWebhookIntake({
      secret: SECRET,
      store,
      clock,
      logger: silentLogger(),
      onQueued: () => worker.notify(),
    });
    const app = Fastify();
    await registerGithubRoutes(app, { intake, maxBodyBytes: 64 * 1024 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    apps.push(app);
    if (work) {
      await worker.start();
      workers.push(worker);
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    return { url: `http://127.0.0.1:${port}/github/webhook`, store, handled, worker };
  }

  it('refuses a forged or unsigned delivery and stores nothing', async () => {
    const { url, store } = await serve();
    const forged = await sendGithubWebhook(url, 'not-the-secret', 'pull_request_review', reviewPayload('a/b', 1, 'x'));
    assert.equal(forged.status, 401);
    const unsigned = await sendGithubWebhook(url, SECRET, 'issue_comment', {}, { signature: '' });
    assert.equal(unsigned.status, 401);
    // A valid signature over other bytes than those sent.
    const body = JSON.stringify(reviewPayload('a/b', 1, 'x'));
    const wrong = await fetch(url, {
      method: 'POST',
      headers: {
        'x-github-event': 'pull_request_review',
        'x-github-delivery': 'd-1',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
        'content-type': 'application/json',
      },
      body,
    });
    assert.equal(wrong.status, 401);
    assert.deepEqual(await store.all(), []);
  });

  it('stores a valid delivery before the 200, processes it, and a redelivery is not processed twice', async () => {
    const { url, store, handled, worker } = await serve();
    const payload = reviewPayload('acme/widgets', 7, 'switchboard/fix-login');
    const first = await sendGithubWebhook(url, SECRET, 'pull_request_review', payload, { deliveryId: 'delivery-1' });
    assert.equal(first.status, 200);
    assert.ok(await store.get('delivery-1'), 'stored by the time the 200 arrived');
    await waitFor('the delivery to be processed', async () => (await store.get('delivery-1'))?.status === 'done');
    const again = await sendGithubWebhook(url, SECRET, 'pull_request_review', payload, { deliveryId: 'delivery-1' });
    assert.equal(again.status, 200);
    await worker.idle();
    assert.equal(handled.length, 1, 'processed once');
    assert.deepEqual(handled[0], {
      kind: 'review',
      action: 'submitted',
      repo: 'acme/widgets',
      pull: 7,
      branch: 'switchboard/fix-login',
      id: 1,
      state: 'changes_requested',
      body: 'please rename the function',
      author: 'reviewer',
      bot: false,
      association: 'COLLABORATOR',
    });
    assert.equal((await store.get('delivery-1'))?.outcome, 'handled review');
    assert.equal((await store.get('delivery-1'))?.attempts, 1);
  });

  it('answers 400 for a body that is not JSON and 413 beyond the limit; a ping is not stored', async () => {
    const { url, store } = await serve();
    const bad = await fetch(url, {
      method: 'POST',
      headers: {
        'x-github-event': 'issue_comment',
        'x-github-delivery': 'd-2',
        'x-hub-signature-256': `sha256=${(await import('node:crypto')).createHmac('sha256', SECRET).update('nope').digest('hex')}`,
        'content-type': 'application/json',
      },
      body: 'nope',
    });
    assert.equal(bad.status, 400);
    const big = await sendGithubWebhook(url, SECRET, 'issue_comment', { pad: 'x'.repeat(70 * 1024) });
    assert.equal(big.status, 413);
    const ping = await sendGithubWebhook(url, SECRET, 'ping', { zen: 'hi' });
    assert.equal(ping.status, 200);
    assert.deepEqual(await store.all(), []);
  });

  it('processes after a restart what was stored but not processed', async () => {
    const first = await serve(false);
    const comment = {
      action: 'created',
      repository: { full_name: 'acme/widgets' },
      issue: { number: 3, pull_request: {} },
      comment: { id: 9, body: '@switchboard fix the typo', user: { login: 'ann' } },
    };
    assert.equal(
      (await sendGithubWebhook(first.url, SECRET, 'issue_comment', comment, { deliveryId: 'd-3' })).status,
      200,
    );
    assert.equal((await first.store.get('d-3'))?.status, 'pending');
    const app = apps.pop();
    await app?.close();
    const second = await serve();
    await waitFor(
      'the stored delivery to be processed',
      async () => (await second.store.get('d-3'))?.status === 'done',
    );
    assert.equal(second.handled.length, 1);
    assert.equal(second.handled[0]?.kind, 'issueComment');
  });
});

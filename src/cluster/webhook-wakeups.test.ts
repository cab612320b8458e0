import assert from 'node:assert/strict';
import { it } from 'node:test';
import Fastify from 'fastify';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { testNotices } from '../../test/support/test-notices.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { announceWebhooks } from '../gateway/webhook-announce.ts';
import { WEBHOOKS_CHANNEL, WebhookWakeups } from './webhook-wakeups.ts';

it("announces a webhook route's 200 (and only that) with its source", async () => {
  const app = Fastify();
  const announced: string[] = [];
  announceWebhooks(app, (source) => announced.push(source));
  await app.register(async (scope) => {
    scope.post('/linear/webhook', async (_request, reply) => reply.code(200).send('ok'));
    scope.post('/github/webhook', async (request, reply) =>
      reply.code(request.headers['x-bad'] ? 401 : 200).send('ok'),
    );
  });
  app.post('/rpc', async () => ({ ok: true }));
  try {
    await app.inject({ method: 'POST', url: '/linear/webhook', payload: {} });
    await app.inject({ method: 'POST', url: '/github/webhook', payload: {}, headers: { 'x-bad': '1' } });
    await app.inject({ method: 'POST', url: '/github/webhook', payload: {} });
    await app.inject({ method: 'POST', url: '/rpc', payload: {} });
    assert.deepEqual(announced, ['linear', 'github']);
  } finally {
    await app.close();
  }
});

describeEachDatabase('webhook wake-ups across nodes', (fresh) => {
  it("wakes this node's workers on a notice, on reconnect and on the poll; announces with NOTIFY", async () => {
    const { db, dialect } = await fresh();
    const clock = new ManualClock();
    const notices = testNotices(WEBHOOKS_CHANNEL);
    const woken: string[] = [];
    const wakeups = new WebhookWakeups({
      db,
      notices,
      workers: { linear: { notify: () => woken.push('linear') }, github: { notify: () => woken.push('github') } },
      clock,
      logger: silentLogger(),
      pollMs: 1000,
    });
    wakeups.start();
    try {
      notices.notify('github');
      notices.notify('something else');
      assert.deepEqual(woken.splice(0), ['github']);
      notices.reconnect();
      assert.deepEqual(woken.splice(0), ['linear', 'github']);
      clock.advance(1000);
      assert.deepEqual(woken.splice(0), ['linear', 'github']);
      if (dialect === 'postgres') {
        wakeups.announce('linear');
        assert.deepEqual(woken.splice(0), ['linear'], 'the local worker is woken at once too');
      }
    } finally {
      wakeups.stop();
    }
    clock.advance(5000);
    notices.notify('linear');
    assert.deepEqual(woken, [], 'nothing after stop');
  });
});

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { captureLogger } from '../../test/support/capture-logger.ts';
import type { StoreManagerFixture } from '../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../test/support/manager-on-store.ts';
import { postHead, rawExchange } from '../../test/support/raw-http.ts';
import { RecordingEngine } from '../../test/support/recording-engine.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { silentLogger } from '../core/logger.ts';
import type { Scheduler } from '../engine/scheduler/scheduler.ts';
import { createScheduler } from '../engine/scheduler/scheduler.ts';
import { createWakeRouter } from '../engine/wake/wake-router.ts';
import { Idempotency } from '../operations/idempotency.ts';
import { OPERATIONS } from '../operations/table.ts';
import { IdempotencyKeyStore } from '../store/idempotency-keys.ts';
import { ensureToken } from '../store/tokens.ts';
import { registerHookRoutes } from './hooks-routes.ts';
import { buildGateway } from './server.ts';

describe('POST /hooks/wake', () => {
  let f: StoreManagerFixture;
  let engine: RecordingEngine;
  let scheduler: Scheduler;
  let app: FastifyInstance;
  let url: string;
  let gatewayToken: string;
  let hooksToken: string;

  /** Serves the real gateway; `lastResort` wires the heartbeat run as the wake's last resort. */
  async function serve(lastResort: boolean, idempotency: Idempotency = keys()): Promise<void> {
    const wake = createWakeRouter({
      db: f.db,
      sessions: f.manager,
      engine,
      ...(lastResort ? { heartbeat: scheduler.heartbeat } : {}),
      clock: f.clock,
      logger: silentLogger(),
      config: f.config,
    });
    app = await buildGateway({
      config: f.config,
      logger: silentLogger(),
      token: gatewayToken,
      ops: OPERATIONS,
      services: { config: f.config, sessions: f.manager, clock: f.clock, scheduler, wake },
      logs: f.logs,
      version: 'test',
      startedAt: 0,
      hooks: { token: hooksToken, wake, heartbeat: scheduler.heartbeat, idempotency },
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }

  function keys(): Idempotency {
    return new Idempotency(new IdempotencyKeyStore(f.db, 'test-process'), f.clock);
  }

  async function wake(
    body: unknown,
    headers: Record<string, string> = { authorization: `Bearer ${hooksToken}` },
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(`${url}/hooks/wake`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  beforeEach(async () => {
    f = await openManagerFixture((path) => openTestStore(path), { 'gateway.port': 0 });
    engine = new RecordingEngine();
    scheduler = createScheduler({
      db: f.db,
      engine,
      clock: f.clock,
      logger: silentLogger(),
      config: f.config,
    });
    await scheduler.start();
    gatewayToken = ensureToken(f.home, 'gateway.token');
    hooksToken = ensureToken(f.home, 'hooks.token');
  });
  afterEach(async () => {
    await app.close();
    await scheduler.stop();
    await f.close();
  });

  it('needs the hooks token: none, the gateway token or a wrong one get 401; the hooks token does not open /rpc', async () => {
    await serve(false);
    engine.addUserSession('eng-1', 1);
    const refused: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${gatewayToken}` },
      { authorization: 'Bearer nope' },
      { 'x-switchboard-token': gatewayToken },
    ];
    for (const headers of refused) {
      const res = await wake({ text: 'hi' }, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.match(String(res.json.error), /hooks token/);
    }
    assert.equal(engine.posts.length, 0);
    assert.equal((await wake({ text: 'hi' })).status, 200);
    assert.equal((await wake({ text: 'hi' }, { 'x-switchboard-token': hooksToken })).status, 200);
    const rpc = await fetch(`${url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${hooksToken}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'cron.list' }),
    });
    assert.equal(rpc.status, 401);
  });

  it('rejects a bad body with 400 naming the field', async () => {
    await serve(false);
    const cases: [unknown, string, RegExp][] = [
      [{}, 'text', /^text: required, a string/],
      [{ text: '   ' }, 'text', /^text: must not be empty/],
      [{ text: 42 }, 'text', /^text: required, a string/],
      [{ text: 'x'.repeat(20_001) }, 'text', /at most 20000 characters/],
      [{ text: 'hi', mode: 'later' }, 'mode', /^mode: must be "now" or "next-heartbeat"/],
      [{ text: 'hi', when: 'now' }, 'when', /unknown field when/],
      ['{"text":', 'body', /^body: not valid JSON/],
      [[1, 2], 'body', /expected a JSON object/],
    ];
    for (const [body, field, pattern] of cases) {
      const res = await wake(body);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 40));
      assert.equal(res.json.field, field);
      assert.match(String(res.json.error), pattern);
    }
    assert.equal(engine.posts.length, 0);
  });

  it('"now" posts a system message (origin hook) to the most recent foreground session, else the heartbeat session', async () => {
    await serve(false);
    engine.addUserSession('older', 1);
    engine.addUserSession('newer', 2);
    const res = await wake({ text: 'deploy done', mode: 'now' });
    assert.equal(res.status, 200);
    assert.deepEqual([res.json.sessionId, res.json.via], ['newer', 'most-recent-foreground']);
    assert.deepEqual(
      [engine.posts[0]?.origin, engine.posts[0]?.text, engine.posts[0]?.via],
      ['hook', 'deploy done', 'system'],
    );
    engine.removeSession('older');
    engine.removeSession('newer');
    engine.addSession('hb', { type: 'heartbeat' });
    const second = await wake({ text: 'again' });
    assert.deepEqual([second.json.sessionId, second.json.via], ['hb', 'heartbeat']);
  });

  it('answers 503 saying what to do when nothing can take it; with the heartbeat wired, runs the heartbeat instead', async () => {
    await serve(false);
    const refused = await wake({ text: 'anyone?' });
    assert.equal(refused.status, 503);
    assert.match(String(refused.json.error), /no session could take the wake.*Message the bot once.*next-heartbeat/);
    engine.failWith = new Error('engine stopped');
    const failing = await wake({ text: 'anyone?' });
    assert.equal(failing.status, 503);
    assert.match(String(failing.json.error), /could not accept the wake \(engine stopped\).*send it again/);
    engine.failWith = null;
    await app.close();

    await serve(true);
    const res = await wake({ text: 'anyone?' });
    assert.equal(res.status, 200);
    assert.deepEqual([res.json.sessionId, res.json.via], ['heartbeat', 'heartbeat-run']);
    assert.match(engine.posts[0]?.text ?? '', /\(hook\)[\s\S]*### Event 1 \(hook, .+\)\n\nanyone\?/);
  });

  it('"next-heartbeat" queues the text durably for exactly the next heartbeat run, which runs with no tasks', async () => {
    await serve(false);
    const res = await wake({ text: 'nightly backup failed', mode: 'next-heartbeat' });
    assert.equal(res.status, 200);
    assert.equal(res.json.nextHeartbeatAt, '2026-01-01T00:30:00.000Z');
    assert.equal(engine.posts.length, 0);
    f.clock.advance(30 * 60_000);
    await scheduler.heartbeat.idle();
    assert.equal(engine.runs.length, 1);
    assert.match(engine.runs[0]?.text ?? '', /### Event 1 \(hook, .+\)\n\nnightly backup failed/);
    f.clock.advance(30 * 60_000);
    await scheduler.heartbeat.idle();
    assert.equal(engine.runs.length, 1, 'included once');
  });

  it('"next-heartbeat" under a key queues the event and stores the answer in one transaction: both or neither', async () => {
    /** Fails to write the first answer, as a crash between the two writes would leave it. */
    class AnswerFailsOnce extends IdempotencyKeyStore {
      #failed = false;
      override async complete(...args: Parameters<IdempotencyKeyStore['complete']>): Promise<void> {
        if (!this.#failed) {
          this.#failed = true;
          throw new Error('the answer could not be written');
        }
        await super.complete(...args);
      }
    }
    await serve(false, new Idempotency(new AnswerFailsOnce(f.db, 'test-process'), f.clock));
    const auth = { authorization: `Bearer ${hooksToken}`, 'idempotency-key': 'hb-atomic' };
    const failed = await wake({ text: 'nightly backup failed', mode: 'next-heartbeat' }, auth);
    assert.equal(failed.status, 500);
    assert.equal((await scheduler.heartbeat.status()).pendingEvents, 0, 'the event went with the answer');
    const queued = await wake({ text: 'nightly backup failed', mode: 'next-heartbeat' }, auth);
    assert.equal(queued.status, 200, 'the key was freed: the repeat runs');
    const again = await wake({ text: 'nightly backup failed', mode: 'next-heartbeat' }, auth);
    assert.deepEqual(again.json, queued.json, 'the answer committed with the event');
    assert.equal((await scheduler.heartbeat.status()).pendingEvents, 1, 'queued once');
  });

  it("answers a 5xx through the gateway's one error handler, and logs every 5xx once", async () => {
    const log = captureLogger('info');
    const wakeRouter = { deliver: async () => null };
    const heartbeat = {
      queueEvent: () => {
        throw new Error('the heartbeat table is locked');
      },
    };
    app = await buildGateway({
      config: f.config,
      logger: log.logger,
      token: gatewayToken,
      ops: OPERATIONS,
      services: { config: f.config, sessions: f.manager, clock: f.clock },
      logs: f.logs,
      version: 'test',
      startedAt: 0,
      hooks: { token: hooksToken, wake: wakeRouter, heartbeat, idempotency: keys() },
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    const res = await wake({ text: 'hi', mode: 'next-heartbeat' });
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { error: 'the heartbeat table is locked' });
    const logged = log.find('error', /^gateway error$/);
    assert.equal(logged.length, 1);
    assert.equal(logged[0]?.url, '/hooks/wake');
    assert.equal(logged[0]?.status, 500);
    const unavailable = await wake({ text: 'anyone?', mode: 'now' });
    assert.equal(unavailable.status, 503);
    assert.deepEqual(
      log.find('warn', /^gateway answered 5xx$/).map((l) => [l.url, l.status]),
      [['/hooks/wake', 503]],
    );
    assert.equal(log.find('error', /^gateway error$/).length, 1, 'the 500 is logged once');
  });

  it('answers a deeply nested body (5,000 levels) with a 400, and a half-sent one without the token with a 401 and a closed connection', async () => {
    await serve(false);
    const depth = 5_000;
    const nested = await wake(`{"text":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    assert.equal(nested.status, 400);
    assert.equal(nested.json.field, 'text');
    const deepObject = await wake(`{"text":"hi","a":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`);
    assert.equal(deepObject.status, 400);
    assert.match(String(deepObject.json.error), /unknown field a/);
    const port = Number(new URL(url).port);
    const halfSent = await rawExchange(port, postHead(port, '/hooks/wake', 50_000) + '{"text":"', 5_000);
    assert.match(halfSent.data, /^HTTP\/1\.1 401 /);
    assert.ok(
      halfSent.closedAfterMs !== null && halfSent.closedAfterMs < 1_000,
      `closed after ${halfSent.closedAfterMs} ms`,
    );
  });

  it('is not served when hooks are disabled, and refuses a hooks token equal to the gateway token', async () => {
    await serve(false);
    await app.close();
    const { default: Fastify } = await import('fastify');
    const bare = Fastify();
    const deps = {
      token: hooksToken,
      gatewayToken,
      logger: silentLogger(),
      wake: { deliver: async () => null },
      heartbeat: scheduler.heartbeat,
      idempotency: keys(),
    };
    await registerHookRoutes(bare, { ...deps, config: { hooks: { enabled: false, maxTextChars: 10 } } });
    const res = await bare.inject({
      method: 'POST',
      url: '/hooks/wake',
      headers: { authorization: `Bearer ${hooksToken}` },
      payload: { text: 'x' },
    });
    assert.equal(res.statusCode, 404);
    await bare.close();
    await assert.rejects(
      registerHookRoutes(Fastify(), { ...deps, gatewayToken: hooksToken, config: f.config }),
      /hooks.token is the same as gateway.token/,
    );
  });

  it('an idempotency key (header or field) answers a repeat with the first answer, and refuses another body under it with 422', async () => {
    await serve(false);
    engine.addUserSession('eng-1', 1);
    const auth = { authorization: `Bearer ${hooksToken}` };
    const first = await wake({ text: 'deploy done' }, { ...auth, 'idempotency-key': 'deploy-42' });
    assert.equal(first.status, 200);
    const again = await wake({ text: 'deploy done', mode: 'now', idempotencyKey: 'deploy-42' });
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, first.json, 'the first answer, again');
    assert.equal(engine.posts.length, 1, 'posted once');
    const other = await wake({ text: 'deploy failed' }, { ...auth, 'idempotency-key': 'deploy-42' });
    assert.equal(other.status, 422);
    assert.equal(other.json.field, 'idempotencyKey');
    assert.match(String(other.json.error), /already used for a different request/);
    const both = await wake({ text: 'x', idempotencyKey: 'a-key' }, { ...auth, 'idempotency-key': 'b-key' });
    assert.equal(both.status, 400);
    const bad = await wake({ text: 'x' }, { ...auth, 'idempotency-key': 'has space' });
    assert.equal(bad.status, 400);
    assert.equal(engine.posts.length, 1);
    const queued = await wake({ text: 'later', mode: 'next-heartbeat' }, { ...auth, 'idempotency-key': 'hb-1' });
    const queuedAgain = await wake({ text: 'later', mode: 'next-heartbeat' }, { ...auth, 'idempotency-key': 'hb-1' });
    assert.equal(queued.status, 200);
    assert.deepEqual(queuedAgain.json, queued.json, 'queued once, answered twice');
  });

  it('a wake that reached no session frees its key: a repeat tries again', async () => {
    await serve(false);
    const auth = { authorization: `Bearer ${hooksToken}`, 'idempotency-key': 'retry-me' };
    assert.equal((await wake({ text: 'hello' }, auth)).status, 503);
    engine.addUserSession('eng-1', 1);
    const res = await wake({ text: 'hello' }, auth);
    assert.equal(res.status, 200);
    assert.equal(res.json.duplicate, false);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { postHead, rawExchange } from '../../test/support/raw-http.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import type { WebGatewayFixture } from '../../test/support/web-gateway.ts';
import { webGateway } from '../../test/support/web-gateway.ts';

// Short limits so the tests are quick: headers and each stretch of body within 0.5 s, a whole request within 1.5 s.
const BODY_MS = 500;
const REQUEST_MS = 1_500;
// Room for a loaded machine: Node checks the header and request limits on an interval, and timers run late.
const SLACK_MS = 1_500;

describe('slow and half-sent requests', () => {
  let g: WebGatewayFixture;
  before(async () => {
    g = await webGateway({
      overrides: { 'gateway.bodyTimeoutSec': BODY_MS / 1000, 'gateway.requestTimeoutSec': REQUEST_MS / 1000 },
    });
  });
  after(async () => {
    await g.close();
  });

  const openConnections = (): Promise<number> =>
    new Promise((resolve, reject) =>
      g.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
  // The client sees a connection closed before the server has let go of its side: wait for the server's count.
  const serverReleasedAll = (): Promise<boolean> =>
    waitFor('the server to release its connections', async () => (await openConnections()) === 0, 5_000);

  it('refuses a half-sent body without credentials at once (401) and closes the connection, on every header-authenticated route', async (t) => {
    // Long timeouts here: the connection must be closed by the refusal, not by a timeout.
    const patient = await webGateway({ overrides: { 'gateway.bodyTimeoutSec': 20, 'gateway.requestTimeoutSec': 30 } });
    t.after(() => patient.close());
    const head = (path: string, extra: Record<string, string> = {}) =>
      postHead(patient.port, path, 100_000, extra) + '{"jsonrpc":"2.0",';
    const cases = [
      { path: '/rpc', request: head('/rpc') },
      { path: '/rpc (wrong token)', request: head('/rpc', { Authorization: 'Bearer wrong' }) },
      { path: '/web/api/chats/chat-test-0001/messages', request: head('/web/api/chats/chat-test-0001/messages') },
      { path: '/sessions/x/events', request: head('/sessions/x/events').replace(/^POST/, 'GET') },
    ];
    for (const c of cases) {
      const outcome = await rawExchange(patient.port, c.request, 5_000);
      assert.match(outcome.data, /^HTTP\/1\.1 401 /, `${c.path}: answered 401 before the body`);
      assert.ok(
        outcome.closedAfterMs !== null && outcome.closedAfterMs < 4_000,
        `${c.path}: closed at once (after ${outcome.closedAfterMs} ms)`,
      );
    }
  });

  it('closes an authenticated request whose body stops arriving within gateway.bodyTimeoutSec, and releases it', async () => {
    const request =
      postHead(g.port, '/rpc', 100_000, { Authorization: `Bearer ${g.gatewayToken}` }) + '[{"jsonrpc":"2.0","id":1,';
    const outcome = await rawExchange(g.port, request, BODY_MS + SLACK_MS * 3);
    assert.ok(outcome.closedAfterMs !== null, 'the connection was closed');
    assert.ok(
      outcome.closedAfterMs >= BODY_MS * 0.8 && outcome.closedAfterMs <= BODY_MS + SLACK_MS,
      `closed after ${outcome.closedAfterMs} ms`,
    );
    await serverReleasedAll();
    assert.equal(await openConnections(), 0, 'the server holds no connection for it any more');
  });

  it('releases the memory of half-sent bodies when their connections are closed', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = (): number => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const before = heap();
    const part = `[${'"x",'.repeat(200_000)}`;
    const head = postHead(g.port, '/rpc', 1_000_000, { Authorization: `Bearer ${g.gatewayToken}` });
    const sent = Array.from({ length: 20 }, () => rawExchange(g.port, head + part, BODY_MS + SLACK_MS * 3));
    await sleep(BODY_MS / 2);
    const held = heap() - before;
    const outcomes = await Promise.all(sent);
    assert.ok(
      outcomes.every((o) => o.closedAfterMs !== null),
      'every one was closed',
    );
    await serverReleasedAll();
    const after = heap() - before;
    assert.ok(held > 10_000_000, `the 20 partial bodies (16 MB) were held while open: ${held} bytes`);
    assert.ok(after < held / 4, `and released once closed: ${after} bytes left of ${held}`);
  });

  it('closes a connection that sends nothing, or half its headers, within gateway.bodyTimeoutSec', async () => {
    const [idle, partial] = await Promise.all([
      rawExchange(g.port, '', BODY_MS + SLACK_MS * 3),
      rawExchange(g.port, `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${g.port}\r\nContent-Ty`, BODY_MS + SLACK_MS * 3),
    ]);
    for (const [label, outcome] of [
      ['idle', idle],
      ['half headers', partial],
    ] as const) {
      assert.ok(
        outcome.closedAfterMs !== null && outcome.closedAfterMs <= BODY_MS + SLACK_MS,
        `${label}: closed after ${outcome.closedAfterMs} ms`,
      );
    }
  });

  it('closes a request whose body trickles in (each piece within the body timeout) at gateway.requestTimeoutSec', async () => {
    const head = postHead(g.port, '/rpc', 100_000, { Authorization: `Bearer ${g.gatewayToken}` });
    const outcome = await rawExchange(
      g.port,
      [head, ...Array.from({ length: 100 }, () => ' ')],
      REQUEST_MS + SLACK_MS * 3,
      BODY_MS / 5,
    );
    assert.ok(outcome.closedAfterMs !== null, 'the connection was closed');
    assert.ok(
      outcome.closedAfterMs >= REQUEST_MS * 0.8 && outcome.closedAfterMs <= REQUEST_MS + SLACK_MS,
      `closed after ${outcome.closedAfterMs} ms`,
    );
  });

  it('keeps answering while many half-sent requests are open, and lets them all go', async () => {
    const pending = Array.from({ length: 200 }, () =>
      rawExchange(g.port, postHead(g.port, '/rpc', 10_000) + '{', BODY_MS * 6),
    );
    const health = await fetch(`http://127.0.0.1:${g.port}/healthz`);
    assert.equal(health.status, 200);
    const outcomes = await Promise.all(pending);
    assert.ok(
      outcomes.every((o) => o.closedAfterMs !== null),
      'every one was closed',
    );
    await serverReleasedAll();
    assert.equal(await openConnections(), 0);
  });

  it('does not cut a live session event stream that outlasts the timeouts', async () => {
    const session = await g.manager.manager.launch({
      prompt: 'stream',
      workdir: g.manager.workdir,
      originChannel: 'cli',
    });
    const request = `GET /sessions/${session.id}/events HTTP/1.1\r\nHost: 127.0.0.1:${g.port}\r\nAuthorization: Bearer ${g.gatewayToken}\r\n\r\n`;
    const outcome = await rawExchange(g.port, request, REQUEST_MS + BODY_MS * 2);
    assert.match(outcome.data, /^HTTP\/1\.1 200 /);
    assert.equal(outcome.closedAfterMs, null, 'still open when the test let go');
  });
});

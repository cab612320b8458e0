import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { WebGatewayFixture } from '../../test/support/web-gateway.ts';
import { webGateway } from '../../test/support/web-gateway.ts';
import type { SseClient } from '../../test/support/web-http.ts';
import { httpCall, openSse } from '../../test/support/web-http.ts';
import type { InboundMessage } from '../channels/connector.ts';

const CHAT = 'chat-test-0001';

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** Loads the page as a browser on this machine would, and returns the Cookie header value it was given. */
async function login(g: WebGatewayFixture): Promise<string> {
  const page = await httpCall(g.port, 'GET', '/', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' });
  assert.equal(page.status, 200);
  const setCookie = page.headers['set-cookie']?.[0] ?? '';
  assert.match(setCookie, /HttpOnly; SameSite=Strict/);
  return setCookie.split(';')[0] as string;
}

function pageHeaders(g: WebGatewayFixture, cookie: string): Record<string, string> {
  return {
    cookie,
    origin: `http://127.0.0.1:${g.port}`,
    'sec-fetch-site': 'same-origin',
    'content-type': 'application/json',
  };
}

function postChat(g: WebGatewayFixture, headers: Record<string, string>, id: string, text: string, chat = CHAT) {
  return httpCall(g.port, 'POST', `/web/api/chats/${chat}/messages`, headers, JSON.stringify({ id, text }));
}

const rpcBody = (method: string, params: Record<string, unknown> = {}): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

describe('web routes', () => {
  let g: WebGatewayFixture;
  const streams: SseClient[] = [];
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await g.close();
  });

  it('serves the page with a strict CSP and hands the cookie only to a loopback Host with the right port', async () => {
    g = await webGateway();
    const page = await httpCall(g.port, 'GET', '/');
    assert.equal(page.status, 200);
    assert.match(page.body, /<script type="module" src="\/web\/assets\/app.js">/);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    const cookie = page.headers['set-cookie']?.[0] ?? '';
    assert.ok(cookie.startsWith(`switchboard_web_${g.port}=${g.webToken};`), cookie);
    assert.match(cookie, /HttpOnly; SameSite=Strict/);

    const rebinding = await httpCall(g.port, 'GET', '/', { host: `attacker.example:${g.port}` });
    assert.equal(rebinding.status, 403);
    assert.equal(rebinding.headers['set-cookie'], undefined);
    const otherPort = await httpCall(g.port, 'GET', '/', { host: '127.0.0.1:9' });
    assert.equal(otherPort.status, 403);
    const proxied = await httpCall(g.port, 'GET', '/', { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(proxied.headers['set-cookie'], undefined);
    assert.match(proxied.body, /name="token" type="password"/);
    const crossSiteFetch = await httpCall(g.port, 'GET', '/', {
      'sec-fetch-site': 'cross-site',
      'sec-fetch-mode': 'cors',
    });
    assert.equal(crossSiteFetch.headers['set-cookie'], undefined);

    const script = await httpCall(g.port, 'GET', '/web/assets/app.js');
    assert.equal(script.status, 200);
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    const renderer = await httpCall(g.port, 'GET', '/web/assets/diff2html.js');
    assert.equal(renderer.status, 200, 'diff2html is served from node_modules for the Changes view');
    assert.match(String(renderer.headers['content-type']), /^text\/javascript/);
    assert.match(
      String((await httpCall(g.port, 'GET', '/web/assets/diff2html.css')).headers['content-type']),
      /^text\/css/,
    );
    assert.equal((await httpCall(g.port, 'GET', '/web/assets/..%2Fweb-routes.ts')).status, 404);
    assert.equal((await httpCall(g.port, 'GET', '/web/assets/login.html')).status, 404);
  });

  it('answers 202 only after the inbound handler resolved, and shows the message pending meanwhile', async () => {
    const called = deferred<InboundMessage>();
    const gate = deferred();
    g = await webGateway({
      handler: () => async (message) => {
        called.resolve(message);
        await gate.promise;
      },
    });
    const cookie = await login(g);
    const sse = await openSse(g.port, `/web/api/chats/${CHAT}/events`, { cookie });
    streams.push(sse);
    let answered = false;
    const post = postChat(g, pageHeaders(g, cookie), 'msg-00000001', 'hello there').then((r) => {
      answered = true;
      return r;
    });
    const message = await called.promise;
    assert.deepEqual(message.target, { channel: 'web', chat: CHAT });
    assert.equal(message.text, 'hello there');
    const [pending] = await sse.waitFor(1);
    assert.equal(JSON.parse(pending?.data ?? '{}').status, 'pending');
    assert.equal((await httpCall(g.port, 'GET', '/healthz')).status, 200);
    assert.equal(answered, false, 'no answer before the handler resolved');
    gate.resolve();
    const res = await post;
    assert.equal(res.status, 202);
    assert.equal(JSON.parse(res.body).message.status, 'accepted');
    const events = await sse.waitFor(2);
    assert.equal(JSON.parse(events[1]?.data ?? '{}').status, 'accepted');
  });

  it('accepts a duplicate message id once', async () => {
    const got: InboundMessage[] = [];
    g = await webGateway({ handler: () => async (m) => void got.push(m) });
    const cookie = await login(g);
    const first = await postChat(g, pageHeaders(g, cookie), 'msg-00000002', 'only once');
    const again = await postChat(g, pageHeaders(g, cookie), 'msg-00000002', 'only once');
    assert.equal(first.status, 202);
    assert.equal(again.status, 202);
    assert.equal(JSON.parse(first.body).duplicate, false);
    assert.equal(JSON.parse(again.body).duplicate, true);
    assert.equal(got.length, 1);
  });

  it('answers 503 when the handler fails, and a retry with the same id goes through', async () => {
    let failures = 1;
    g = await webGateway({
      handler: () => async () => {
        if (failures-- > 0) throw new Error('engine is restarting');
      },
    });
    const cookie = await login(g);
    const failed = await postChat(g, pageHeaders(g, cookie), 'msg-00000003', 'try again');
    assert.equal(failed.status, 503);
    assert.match(JSON.parse(failed.body).error, /engine is restarting/);
    const retried = await postChat(g, pageHeaders(g, cookie), 'msg-00000003', 'try again');
    assert.equal(retried.status, 202);
  });

  it('validates the chat id and the body, naming the field', async () => {
    g = await webGateway();
    const cookie = await login(g);
    const empty = await postChat(g, pageHeaders(g, cookie), 'msg-00000004', '   ');
    assert.equal(empty.status, 400);
    assert.match(JSON.parse(empty.body).error, /^text: must not be empty/);
    const badId = await postChat(g, pageHeaders(g, cookie), 'x', 'hi');
    assert.match(JSON.parse(badId.body).error, /^id: /);
    const badChat = await postChat(g, pageHeaders(g, cookie), 'msg-00000005', 'hi', 'no');
    assert.equal(badChat.status, 400);
    assert.match(JSON.parse(badChat.body).error, /^chat: /);
  });

  it('streams sent messages with ids and resumes from Last-Event-ID with what was missed', async () => {
    g = await webGateway();
    const cookie = await login(g);
    const target = { channel: 'web', chat: CHAT };
    await g.connector.send(target, { text: 'sent before any page was open' });
    const first = await openSse(g.port, `/web/api/chats/${CHAT}/events`, { cookie });
    streams.push(first);
    assert.equal(first.status, 200);
    await g.connector.send(target, { text: '🔔 [fix-tests] asks: which file?' });
    const seen = await first.waitFor(2);
    assert.deepEqual(
      seen.map((e) => JSON.parse(e.data).text),
      ['sent before any page was open', '🔔 [fix-tests] asks: which file?'],
    );
    first.close();
    await g.connector.send(target, { text: '✅ [fix-tests] Completed' });
    await g.connector.send(target, { text: 'while nobody watched' });
    const resumed = await openSse(g.port, `/web/api/chats/${CHAT}/events`, {
      cookie,
      'last-event-id': seen[1]?.id ?? '',
    });
    streams.push(resumed);
    const missed = await resumed.waitFor(2);
    assert.deepEqual(
      missed.map((e) => JSON.parse(e.data).text),
      ['✅ [fix-tests] Completed', 'while nobody watched'],
    );
    assert.ok(Number(missed[0]?.id) > Number(seen[1]?.id));
    await g.connector.send(target, { text: 'live again' });
    assert.equal(JSON.parse((await resumed.waitFor(3))[2]?.data ?? '{}').text, 'live again');
    assert.equal(resumed.events.length, 3, 'nothing repeated');
    const reload = await openSse(g.port, `/web/api/chats/${CHAT}/events`, { cookie });
    streams.push(reload);
    assert.equal((await reload.waitFor(5)).length, 5);
  });

  it('refuses the chat API without the cookie, from a foreign Origin, a non-loopback Host or cross-site', async () => {
    g = await webGateway();
    const cookie = await login(g);
    const none = await postChat(
      g,
      { 'content-type': 'application/json', origin: `http://127.0.0.1:${g.port}` },
      'msg-00000006',
      'hi',
    );
    assert.equal(none.status, 401);
    const foreign = await postChat(
      g,
      { ...pageHeaders(g, cookie), origin: 'http://127.0.0.1:3000' },
      'msg-00000006',
      'hi',
    );
    assert.equal(foreign.status, 403);
    const noOrigin = await postChat(g, { cookie, 'content-type': 'application/json' }, 'msg-00000006', 'hi');
    assert.equal(noOrigin.status, 403);
    const rebinding = await postChat(
      g,
      { ...pageHeaders(g, cookie), host: `attacker.example:${g.port}`, origin: `http://attacker.example:${g.port}` },
      'msg-00000006',
      'hi',
    );
    assert.equal(rebinding.status, 403);
    const crossSite = await openSse(g.port, `/web/api/chats/${CHAT}/events`, {
      cookie,
      'sec-fetch-site': 'cross-site',
    });
    streams.push(crossSite);
    assert.equal(crossSite.status, 403);
    const bearer = await postChat(
      g,
      { authorization: `Bearer ${g.gatewayToken}`, 'content-type': 'application/json' },
      'msg-00000006',
      'hi',
    );
    assert.equal(bearer.status, 202, 'the bearer token works without a page');
  });

  it('accepts the cookie on /rpc and /sessions/:ref/events, with the same checks; the bearer path is unchanged', async () => {
    g = await webGateway();
    const cookie = await login(g);
    const session = await g.manager.manager.launch({
      prompt: 'add a test',
      workdir: g.manager.workdir,
      originChannel: 'cli',
    });
    await g.manager.harness.last.emit(
      { type: 'started', backendSessionId: 'b-1' },
      { type: 'text', text: 'Reading the code.' },
    );

    const listed = await httpCall(g.port, 'POST', '/rpc', pageHeaders(g, cookie), rpcBody('sessions.list'));
    assert.equal(listed.status, 200);
    assert.equal(JSON.parse(listed.body).result.sessions[0].name, session.name);
    const foreign = await httpCall(
      g.port,
      'POST',
      '/rpc',
      { ...pageHeaders(g, cookie), origin: 'http://evil.example' },
      rpcBody('sessions.list'),
    );
    assert.equal(foreign.status, 401);
    const anonymous = await httpCall(
      g.port,
      'POST',
      '/rpc',
      { 'content-type': 'application/json', origin: `http://127.0.0.1:${g.port}` },
      rpcBody('sessions.list'),
    );
    assert.equal(anonymous.status, 401);
    const bearer = await httpCall(
      g.port,
      'POST',
      '/rpc',
      { authorization: `Bearer ${g.gatewayToken}` },
      rpcBody('sessions.list'),
    );
    assert.equal(bearer.status, 200);
    const webTokenAsBearer = await httpCall(
      g.port,
      'POST',
      '/rpc',
      { authorization: `Bearer ${g.webToken}` },
      rpcBody('sessions.list'),
    );
    assert.equal(webTokenAsBearer.status, 401, 'the web token is a cookie, not a bearer token');

    const events = await openSse(g.port, `/sessions/${session.id}/events`, { cookie, 'sec-fetch-site': 'same-origin' });
    streams.push(events);
    assert.equal(events.status, 200);
    await g.manager.harness.last.emit({ type: 'text', text: 'Now writing the test.' });
    const outputs = async (): Promise<string[]> => {
      for (let n = 1; ; n += 1) {
        const got = (await events.waitFor(n))
          .filter((e) => e.event === 'output')
          .map((e) => JSON.parse(e.data).text as string);
        if (got.length === 2) return got;
      }
    };
    assert.deepEqual(await outputs(), ['Reading the code.', 'Now writing the test.']);
    const refusals: Record<string, string>[] = [
      { cookie, 'sec-fetch-site': 'cross-site' },
      { cookie, host: `attacker.example:${g.port}` },
      {},
    ];
    for (const headers of refusals) {
      const refused = await openSse(g.port, `/sessions/${session.id}/events`, headers);
      streams.push(refused);
      assert.equal(refused.status, 401, JSON.stringify(headers));
    }
  });

  it('asks for the gateway token once when login is required, never taking it from the URL', async () => {
    g = await webGateway({ overrides: { channels: { web: { requireLogin: true } } } });
    const page = await httpCall(g.port, 'GET', '/');
    assert.equal(page.headers['set-cookie'], undefined);
    assert.match(page.body, /<form method="post" action="\/web\/login"/);
    const origin = `http://127.0.0.1:${g.port}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', origin };
    const wrong = await httpCall(g.port, 'POST', '/web/login', form, `token=${g.webToken}`);
    assert.equal(wrong.status, 401);
    assert.match(wrong.body, /not the gateway token/);
    assert.equal(wrong.headers['set-cookie'], undefined);
    const foreign = await httpCall(
      g.port,
      'POST',
      '/web/login',
      { ...form, origin: 'http://evil.example' },
      `token=${g.gatewayToken}`,
    );
    assert.equal(foreign.status, 403);
    const inUrl = await httpCall(g.port, 'GET', `/?token=${g.gatewayToken}`);
    assert.equal(inUrl.headers['set-cookie'], undefined);
    const ok = await httpCall(g.port, 'POST', '/web/login', form, `token=${encodeURIComponent(g.gatewayToken)}`);
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.location, '/');
    const cookie = (ok.headers['set-cookie']?.[0] ?? '').split(';')[0] as string;
    const info = await httpCall(g.port, 'GET', '/web/api/info', { cookie });
    assert.equal(info.status, 200);
    assert.equal(JSON.parse(info.body).loginRequired, true);
    const again = await httpCall(g.port, 'GET', '/', { cookie });
    assert.match(again.body, /app\.js/);
    const out = await httpCall(g.port, 'POST', '/web/logout', { cookie, origin });
    assert.match(out.headers['set-cookie']?.[0] ?? '', /Max-Age=0/);
  });

  it('with gateway.allowRemote, serves other host names but only with a login', async () => {
    g = await webGateway({ overrides: { gateway: { allowRemote: true } } });
    const page = await httpCall(g.port, 'GET', '/', { host: `box.lan:${g.port}` });
    assert.equal(page.status, 200);
    assert.equal(page.headers['set-cookie'], undefined);
    assert.match(page.body, /Gateway token/);
  });

  it('serves no page and takes no cookie when channels.web.enabled is off', async () => {
    g = await webGateway({ overrides: { channels: { web: { enabled: false } } } });
    assert.equal((await httpCall(g.port, 'GET', '/')).status, 404);
    const cookie = `switchboard_web_${g.port}=${g.webToken}`;
    const rpc = await httpCall(g.port, 'POST', '/rpc', pageHeaders(g, cookie), rpcBody('sessions.list'));
    assert.equal(rpc.status, 401);
  });

  it('closes with page streams open (chat and session events)', { timeout: 20_000 }, async () => {
    g = await webGateway();
    const session = await g.manager.manager.launch({ prompt: 'x', workdir: g.manager.workdir, originChannel: 'cli' });
    const cookie = await login(g);
    for (const path of [`/sessions/${session.id}/events`, `/web/api/chats/${CHAT}/events`]) {
      const stream = await openSse(g.port, path, { cookie });
      streams.push(stream);
      assert.equal(stream.status, 200);
    }
    await g.app.close();
    assert.equal(g.app.server.listening, false);
  });
});

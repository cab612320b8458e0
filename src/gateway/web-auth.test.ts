import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestFacts, WebAuthOptions } from './web-auth.ts';
import { cookieValue, isLoopbackAddress, isLoopbackHost, originMatchesHost, WebAuth } from './web-auth.ts';

const PORT = 18789;
const WEB = 'w'.repeat(64);
const GATEWAY = 'g'.repeat(64);

function facts(over: Partial<RequestFacts> = {}): RequestFacts {
  return {
    method: 'GET',
    remoteAddress: '127.0.0.1',
    localPort: PORT,
    host: `127.0.0.1:${PORT}`,
    origin: undefined,
    fetchSite: undefined,
    fetchMode: undefined,
    cookie: `switchboard_web_${PORT}=${WEB}`,
    forwarded: false,
    ...over,
  };
}

function auth(over: Partial<WebAuthOptions> = {}): WebAuth {
  return new WebAuth({
    webToken: WEB,
    gatewayToken: GATEWAY,
    allowRemote: false,
    requireLogin: false,
    cookieMaxAgeSeconds: 3600,
    secureCookie: false,
    ...over,
  });
}

describe('web auth rules', () => {
  it('knows loopback socket addresses and loopback Host headers with the right port', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(a), true, a);
    for (const a of ['10.0.0.1', '::ffff:10.0.0.1', '192.168.1.2', '', undefined])
      assert.equal(isLoopbackAddress(a), false, String(a));
    for (const h of [`127.0.0.1:${PORT}`, `localhost:${PORT}`, `LOCALHOST:${PORT}`, `[::1]:${PORT}`])
      assert.equal(isLoopbackHost(h, PORT), true, h);
    for (const h of [
      `evil.example:${PORT}`,
      `127.0.0.1:1234`,
      '127.0.0.1',
      `localhost.evil.example:${PORT}`,
      `127.0.0.1.nip.io:${PORT}`,
      undefined,
    ]) {
      assert.equal(isLoopbackHost(h, PORT), false, String(h));
    }
    assert.equal(isLoopbackHost('localhost', 80), true);
  });

  it('matches an Origin to the Host by host and port only', () => {
    assert.equal(originMatchesHost(`http://127.0.0.1:${PORT}`, `127.0.0.1:${PORT}`), true);
    assert.equal(originMatchesHost(`http://localhost:${PORT}`, `127.0.0.1:${PORT}`), false);
    assert.equal(originMatchesHost('http://127.0.0.1:3000', `127.0.0.1:${PORT}`), false);
    assert.equal(originMatchesHost('null', `127.0.0.1:${PORT}`), false);
    assert.equal(originMatchesHost(undefined, `127.0.0.1:${PORT}`), false);
  });

  it('reads one cookie out of a Cookie header', () => {
    assert.equal(cookieValue('a=1; switchboard_web_1=xyz; b=2', 'switchboard_web_1'), 'xyz');
    assert.equal(cookieValue('switchboard_web_10=xyz', 'switchboard_web_1'), undefined);
    assert.equal(cookieValue(undefined, 'x'), undefined);
  });

  it('accepts the cookie from a same-origin loopback page, writes only with a matching Origin', () => {
    const a = auth();
    assert.deepEqual(a.authorize(facts()), { ok: true });
    assert.deepEqual(a.authorize(facts({ fetchSite: 'same-origin' })), { ok: true });
    assert.deepEqual(a.authorize(facts({ method: 'POST', origin: `http://127.0.0.1:${PORT}` })), { ok: true });
    const noOrigin = a.authorize(facts({ method: 'POST' }));
    assert.equal(noOrigin.ok, false);
    const foreign = a.authorize(facts({ method: 'POST', origin: 'http://127.0.0.1:3000' }));
    assert.equal(!foreign.ok && foreign.status, 403);
    const crossSite = a.authorize(facts({ fetchSite: 'cross-site' }));
    assert.equal(!crossSite.ok && crossSite.status, 403);
    assert.equal(a.authorize(facts({ fetchSite: 'same-site' })).ok, false);
  });

  it('refuses a wrong or missing cookie, a rebinding Host, and a non-loopback client', () => {
    const a = auth();
    const wrong = a.authorize(facts({ cookie: `switchboard_web_${PORT}=${'x'.repeat(64)}` }));
    assert.equal(!wrong.ok && wrong.status, 401);
    assert.equal(a.authorize(facts({ cookie: undefined })).ok, false);
    assert.equal(a.authorize(facts({ cookie: `switchboard_web_1=${WEB}` })).ok, false);
    const rebinding = a.authorize(facts({ host: `evil.example:${PORT}` }));
    assert.equal(!rebinding.ok && rebinding.status, 403);
    assert.equal(a.authorize(facts({ remoteAddress: '10.0.0.7' })).ok, false);
  });

  it('hands out the cookie without login only to a direct loopback visit', () => {
    const a = auth();
    assert.equal(a.mayAutoLogin(facts({ cookie: undefined })), true);
    assert.equal(a.mayAutoLogin(facts({ fetchSite: 'cross-site', fetchMode: 'navigate' })), true);
    assert.equal(a.mayAutoLogin(facts({ fetchSite: 'cross-site', fetchMode: 'cors' })), false);
    assert.equal(a.mayAutoLogin(facts({ forwarded: true })), false);
    assert.equal(a.mayAutoLogin(facts({ host: `evil.example:${PORT}` })), false);
    assert.equal(auth({ requireLogin: true }).mayAutoLogin(facts()), false);
    assert.equal(auth({ allowRemote: true }).mayAutoLogin(facts()), false);
  });

  it('logs in with the gateway token only, from the same origin', () => {
    const a = auth({ allowRemote: true });
    const post = {
      method: 'POST',
      remoteAddress: '10.0.0.7',
      host: 'box.lan:18789',
      origin: 'http://box.lan:18789',
      cookie: undefined,
    };
    assert.deepEqual(a.login(facts(post), GATEWAY), { ok: true });
    assert.equal(a.login(facts(post), WEB).ok, false);
    assert.equal(a.login(facts({ ...post, origin: 'http://evil.example' }), GATEWAY).ok, false);
    assert.equal(auth().login(facts(post), GATEWAY).ok, false, 'remote clients are refused when allowRemote is off');
  });

  it('builds an HttpOnly SameSite=Strict cookie named for the port', () => {
    const cookie = auth({ secureCookie: true }).setCookie(facts());
    assert.match(
      cookie,
      new RegExp(`^switchboard_web_${PORT}=${WEB}; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600; Secure$`),
    );
    assert.match(auth().clearCookie(facts()), /=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
  });
});

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import type { FakeLinear } from '../../../test/support/fake-linear.ts';
import { FAKE_IDS, FAKE_OAUTH_CLIENT, startFakeLinear } from '../../../test/support/fake-linear.ts';
import { TEST_WEBHOOK_SECRET } from '../../../test/support/linear-webhook-fixtures.ts';
import type { TestStore } from '../../../test/support/test-store.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { ManualClock } from '../../core/clock.ts';
import { linearSchema } from '../../core/config-linear.ts';
import { silentLogger } from '../../core/logger.ts';
import { registerLinearRoutes } from '../../gateway/linear-routes.ts';
import { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import { WebhookIntake } from '../webhooks/intake.ts';
import type { LinearAccess } from './access.ts';
import { buildLinearAccess } from './access.ts';
import { LinearApiError } from './types.ts';

describe('Linear OAuth', () => {
  let fake: FakeLinear;
  let clock: ManualClock;
  let app: FastifyInstance;
  let base: string;
  let linear: LinearAccess;
  let store: TestStore;

  beforeEach(async () => {
    clock = new ManualClock(Date.now());
    fake = await startFakeLinear({ now: () => clock.now() });
    app = Fastify();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    base = `http://127.0.0.1:${port}`;
    const config = linearSchema.parse({
      apiUrl: fake.graphqlUrl,
      oauth: {
        clientId: FAKE_OAUTH_CLIENT.clientId,
        clientSecret: FAKE_OAUTH_CLIENT.clientSecret,
        authorizeUrl: fake.authorizeUrl,
        tokenUrl: fake.tokenUrl,
      },
      requests: { backoffInitialMs: 1, backoffMaxMs: 2 },
    });
    store = await openTestStore();
    const db = store.db;
    linear = buildLinearAccess({
      config,
      gateway: { host: '127.0.0.1', port },
      env: {},
      db,
      clock,
      logger: silentLogger(),
    });
    // Routes registered after listen() are not allowed; build a second app that serves the callback.
    await app.close();
    app = Fastify();
    const intake = new WebhookIntake({
      secret: TEST_WEBHOOK_SECRET,
      store: new LinearDeliveryStore(db),
      clock,
      logger: silentLogger(),
    });
    await registerLinearRoutes(app, { intake, oauth: linear.oauth, maxBodyBytes: 1_048_576, logger: silentLogger() });
    await app.listen({ host: '127.0.0.1', port });
  });
  afterEach(async () => {
    await app.close();
    await fake.close();
    await store.close();
  });

  /** The browser part: open the authorize URL, follow Linear's redirect back to the callback. */
  async function browse(url: string): Promise<{ status: number; html: string }> {
    const response = await fetch(url, { redirect: 'follow' });
    return { status: response.status, html: await response.text() };
  }

  async function connect(): Promise<void> {
    const { url } = await linear.oauth.authorize();
    const page = await browse(url);
    assert.equal(page.status, 200, page.html);
  }

  it('builds the authorize URL with actor=app, the app scopes, the callback and a fresh random state', async () => {
    const first = await linear.oauth.authorize();
    const second = await linear.oauth.authorize();
    const url = new URL(first.url);
    assert.equal(url.origin + url.pathname, fake.authorizeUrl);
    assert.equal(url.searchParams.get('client_id'), FAKE_OAUTH_CLIENT.clientId);
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('actor'), 'app');
    assert.equal(url.searchParams.get('scope'), 'read,write,app:assignable,app:mentionable');
    assert.equal(url.searchParams.get('redirect_uri'), `${base}/linear/oauth/callback`);
    assert.equal(url.searchParams.get('state'), first.state);
    assert.ok(first.state.length >= 40);
    assert.notEqual(first.state, second.state);
  });

  it('completes the flow through the callback route: code exchange, tokens and identity stored, then used with Bearer', async () => {
    const { url } = await linear.oauth.authorize();
    const page = await browse(url);
    assert.equal(page.status, 200);
    assert.match(page.html, /connected to the Acme workspace as switchboard/);
    const stored = await linear.oauth.storedTokens();
    assert.ok(stored?.accessToken.startsWith('lin_oauth_'));
    assert.ok(stored?.refreshToken);
    assert.equal(stored?.appUserId, FAKE_IDS.appUser);
    assert.equal(stored?.organizationName, 'Acme');
    assert.equal(stored?.expiresAt, clock.now() + 86_400_000);
    assert.equal((await linear.tokens.describe())?.source, 'oauth');
    await linear.api.getIssue('ENG-1');
    assert.equal(fake.requestsFor('issue')[0]?.authorization, `Bearer ${stored?.accessToken}`);
  });

  it('refuses an unknown, a reused and an expired state, without exchanging the code', async () => {
    const unknown = await browse(`${base}/linear/oauth/callback?code=abc&state=forged-state-value`);
    assert.equal(unknown.status, 403);
    assert.match(unknown.html, /was not issued by this daemon/);

    const { state } = await linear.oauth.authorize();
    const code = new URL(
      (
        await fetch(
          `${fake.authorizeUrl}?${new URLSearchParams({ client_id: FAKE_OAUTH_CLIENT.clientId, redirect_uri: `${base}/linear/oauth/callback`, state }).toString()}`,
          { redirect: 'manual' },
        )
      ).headers.get('location') ?? '',
    ).searchParams.get('code');
    assert.ok(code);
    const first = await browse(`${base}/linear/oauth/callback?code=${code}&state=${state}`);
    assert.equal(first.status, 200);
    const replay = await browse(`${base}/linear/oauth/callback?code=${code}&state=${state}`);
    assert.equal(replay.status, 403);
    assert.match(replay.html, /already used/);

    const late = await linear.oauth.authorize();
    clock.advance(600_001);
    const expired = await browse(late.url);
    assert.equal(expired.status, 403);
    assert.match(expired.html, /has expired/);

    assert.equal(fake.tokenRequests.filter((t) => t.grantType === 'authorization_code').length, 1);
    const missing = await browse(`${base}/linear/oauth/callback?code=abc`);
    assert.equal(missing.status, 400);
  });

  it('on 401 refreshes once and retries; the rotated refresh token is stored with the access token', async () => {
    await connect();
    const before = await linear.oauth.storedTokens();
    assert.ok(before);
    fake.expireAccessToken(before.accessToken);
    const issue = await linear.api.getIssue('ENG-1');
    assert.equal(issue.identifier, 'ENG-1');
    const after = await linear.oauth.storedTokens();
    assert.ok(after);
    assert.notEqual(after.accessToken, before.accessToken);
    assert.notEqual(after.refreshToken, before.refreshToken, 'rotated');
    assert.deepEqual(
      fake.requestsFor('issue').map((r) => r.status),
      [401, 200],
    );
    assert.deepEqual(
      fake.tokenRequests.map((t) => `${t.grantType}:${t.ok}`),
      ['authorization_code:true', 'refresh_token:true'],
    );
    // The old refresh token is spent: only the stored (rotated) one works.
    fake.expireAccessToken(after.accessToken);
    await linear.api.getIssue('ENG-2');
    assert.equal(fake.tokenRequests.at(-1)?.ok, true);
  });

  it('shares one refresh between concurrent calls', async () => {
    await connect();
    fake.expireAccessToken((await linear.oauth.storedTokens())?.accessToken ?? '');
    const results = await Promise.all(
      ['ENG-1', 'ENG-2', 'ENG-1', 'ENG-2', 'ENG-1'].map((id) => linear.api.getIssue(id)),
    );
    assert.equal(results.length, 5);
    assert.equal(fake.tokenRequests.filter((t) => t.grantType === 'refresh_token').length, 1);
  });

  it('refreshes 60 s before expiry without waiting for a 401, and again at the next expiry', async () => {
    await connect();
    clock.advance(86_400_000 - 59_000);
    await linear.api.getIssue('ENG-1');
    assert.deepEqual(
      fake.requestsFor('issue').map((r) => r.status),
      [200],
    );
    assert.equal(fake.tokenRequests.filter((t) => t.grantType === 'refresh_token').length, 1);
    clock.advance(86_400_000 - 30_000);
    await linear.api.getIssue('ENG-1');
    assert.equal(
      fake.tokenRequests.filter((t) => t.grantType === 'refresh_token').length,
      2,
      'the in-flight refresh was cleared',
    );
  });

  it('fails as auth when the token is still refused after one refresh', async () => {
    await connect();
    fake.script(
      { match: 'issue', reply: { kind: 'status', status: 401 } },
      { match: 'issue', reply: { kind: 'status', status: 401 } },
    );
    const error = await linear.api.getIssue('ENG-1').catch((e: unknown) => e);
    assert.ok(error instanceof LinearApiError);
    assert.equal(error.kind, 'auth');
    assert.equal(error.retryable, false);
    assert.equal(fake.requestsFor('issue').length, 2);
    assert.equal(fake.tokenRequests.filter((t) => t.grantType === 'refresh_token').length, 1);
  });

  it('forgets a failed refresh, so the next one is attempted again', async () => {
    await connect();
    const stored = await linear.oauth.storedTokens();
    assert.ok(stored);
    const port = Number(new URL(fake.url).port);
    await fake.close();
    await assert.rejects(linear.oauth.refresh(), (e: unknown) => e instanceof LinearApiError && e.kind === 'network');
    fake = await startFakeLinear({ now: () => clock.now(), port });
    await assert.rejects(linear.oauth.refresh(), (e: unknown) => e instanceof LinearApiError);
    assert.equal(fake.tokenRequests.length, 1, 'a second refresh request was made, not the cached failure');
    assert.equal(
      (await linear.oauth.storedTokens())?.refreshToken,
      stored.refreshToken,
      'a failed refresh leaves the stored tokens alone',
    );
  });
});

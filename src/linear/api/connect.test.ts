import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Fastify from 'fastify';
import type { FakeLinear } from '../../../test/support/fake-linear.ts';
import { FAKE_OAUTH_CLIENT, startFakeLinear } from '../../../test/support/fake-linear.ts';
import { TEST_WEBHOOK_SECRET } from '../../../test/support/linear-webhook-fixtures.ts';
import { freePort } from '../../../test/support/ports.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import type { TestStore } from '../../../test/support/test-store.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import type { Clock } from '../../core/clock.ts';
import { ManualClock, systemClock } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import { linearSchema } from '../../core/config-linear.ts';
import { AppError } from '../../core/errors.ts';
import { silentLogger } from '../../core/logger.ts';
import { registerLinearRoutes } from '../../gateway/linear-routes.ts';
import { LinearDeliveryStore } from '../../store/linear-deliveries.ts';
import { WebhookIntake } from '../webhooks/intake.ts';
import { buildLinearAccess } from './access.ts';
import { linearConnect } from './connect.ts';
import { defaultRedirectUri } from './oauth.ts';
import { formatLinearStatus, linearStatus } from './status.ts';

/** Acts as the browser once the authorize URL is printed. */
function browserOn(authorizeUrl: Promise<string>, query: Record<string, string> = {}): Promise<number> {
  return (async () => {
    const url = new URL(await authorizeUrl);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    return (await fetch(url, { redirect: 'follow' })).status;
  })();
}

describe('switchboard linear connect / status', { timeout: 60_000 }, () => {
  let fake: FakeLinear;
  let dir: ReturnType<typeof tempDir>;
  let port: number;
  let config: LinearConfig;
  /** The databases opened by a test (the CLI's and the daemon's, over the same state.db), closed after it. */
  let opened: TestStore[] = [];

  beforeEach(async () => {
    fake = await startFakeLinear();
    dir = tempDir('sb-linear-connect-');
    port = await freePort();
    config = linearSchema.parse({
      enabled: true,
      apiUrl: fake.graphqlUrl,
      oauth: {
        clientId: FAKE_OAUTH_CLIENT.clientId,
        clientSecret: FAKE_OAUTH_CLIENT.clientSecret,
        authorizeUrl: fake.authorizeUrl,
        tokenUrl: fake.tokenUrl,
      },
    });
  });
  afterEach(async () => {
    await fake.close();
    for (const store of opened) await store.close();
    opened = [];
    dir.remove();
  });

  /** Opens the test's database standing for `<dir>/state.db` (the same one for the CLI and the daemon). */
  async function stateDb(): Promise<TestStore> {
    const store = await openTestStore(join(dir.path, 'state.db'));
    opened.push(store);
    return store;
  }

  async function cli(clock: Clock = systemClock()) {
    const access = buildLinearAccess({
      config,
      gateway: { host: '127.0.0.1', port },
      env: {},
      db: (await stateDb()).db,
      clock,
      logger: silentLogger(),
    });
    const lines: string[] = [];
    // The authorize URL, once printed.
    const { promise: authorizeUrl, resolve: printedUrl } = Promise.withResolvers<string>();
    const print = (line: string): void => {
      lines.push(line);
      if (line.startsWith('http')) printedUrl(line);
    };
    const run = (timeoutMs = 30_000) =>
      linearConnect({
        oauth: access.oauth,
        oauthStore: access.oauthStore,
        redirectUri: defaultRedirectUri(config.oauth, { host: '127.0.0.1', port }),
        clock,
        logger: silentLogger(),
        print,
        timeoutMs,
        pollIntervalMs: 10,
      });
    return { access, lines, authorizeUrl, run };
  }

  it('waits on a one-shot listener when no daemon serves the redirect URI, and stores the tokens', async () => {
    const { access, authorizeUrl, run } = await cli();
    const [result, status] = await Promise.all([run(), browserOn(authorizeUrl)]);
    assert.equal(status, 200);
    assert.equal(result.via, 'listener');
    assert.equal(result.tokens.organizationName, 'Acme');
    assert.equal((await access.tokens.describe())?.source, 'oauth');
    const text = formatLinearStatus(
      await linearStatus(
        { config, env: {}, tokens: access.tokens, oauth: access.oauth, api: access.api },
        { check: true },
      ),
      Date.now(),
    );
    assert.match(
      text,
      /token: oauth \(default\) \(OAuth access token\), expires .* \(in 24 h\), refreshed automatically/,
    );
    assert.match(text, /oauth: connected to Acme as switchboard/);
    assert.match(text, /webhook signing secret: MISSING/);
    assert.match(text, /check: ok — switchboard in Acme/);
    assert.doesNotMatch(text, /lin_oauth_/);
  });

  it('lets the running daemon take the callback and watches the shared store for the outcome', async () => {
    const daemonDb = (await stateDb()).db;
    const daemon = buildLinearAccess({
      config,
      gateway: { host: '127.0.0.1', port },
      env: {},
      db: daemonDb,
      clock: systemClock(),
      logger: silentLogger(),
    });
    const app = Fastify();
    const intake = new WebhookIntake({
      secret: TEST_WEBHOOK_SECRET,
      store: new LinearDeliveryStore(daemonDb),
      clock: systemClock(),
      logger: silentLogger(),
    });
    await registerLinearRoutes(app, { intake, oauth: daemon.oauth, maxBodyBytes: 1_048_576, logger: silentLogger() });
    await app.listen({ host: '127.0.0.1', port });
    try {
      const { lines, authorizeUrl, run } = await cli();
      const [result, status] = await Promise.all([run(), browserOn(authorizeUrl)]);
      assert.equal(status, 200);
      assert.equal(result.via, 'daemon');
      assert.equal(result.tokens.appUserName, 'switchboard');
      assert.match(lines.join('\n'), /Waiting for the switchboard daemon/);
    } finally {
      await app.close();
    }
  });

  it('reports a denied authorization', async () => {
    const { authorizeUrl, run } = await cli();
    const [outcome] = await Promise.allSettled([
      run(),
      (async () => {
        const state = new URL(await authorizeUrl).searchParams.get('state') ?? '';
        return (await fetch(`http://127.0.0.1:${port}/linear/oauth/callback?error=access_denied&state=${state}`))
          .status;
      })(),
    ]);
    assert.equal(outcome.status, 'rejected');
    assert.ok(
      outcome.status === 'rejected' &&
        outcome.reason instanceof AppError &&
        /did not authorize the app: access_denied/.test(outcome.reason.message),
    );
  });

  it('gives up after connectTimeoutMs', async () => {
    const clock = new ManualClock(Date.now());
    const { authorizeUrl, run } = await cli(clock);
    const pending = run(60_000);
    await authorizeUrl;
    clock.advance(60_000);
    await assert.rejects(
      pending,
      (e: unknown) => e instanceof AppError && /no OAuth callback within 60 s/.test(e.message),
    );
  });
});

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FakeLinear } from '../../../test/support/fake-linear.ts';
import { startFakeLinear } from '../../../test/support/fake-linear.ts';
import type { TestStore } from '../../../test/support/test-store.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { systemClock } from '../../core/clock.ts';
import { linearSchema } from '../../core/config-linear.ts';
import { AppError } from '../../core/errors.ts';
import { silentLogger } from '../../core/logger.ts';
import { LinearOAuthStore } from '../../store/linear-oauth.ts';
import { buildLinearAccess } from './access.ts';
import { requireLinearSecrets } from './credentials.ts';
import { LinearApiError } from './types.ts';

describe('Linear token resolution', () => {
  let fake: FakeLinear;
  let store: TestStore;

  beforeEach(async () => {
    fake = await startFakeLinear({ apiKeys: ['lin_api_config', 'lin_api_from_named_env', 'lin_api_env'] });
    store = await openTestStore();
  });
  afterEach(async () => {
    await fake.close();
    await store.close();
  });

  async function storeOAuth(): Promise<string> {
    const issued = fake.issueTokens();
    await new LinearOAuthStore(store.db).saveInstall(
      'default',
      {
        accessToken: issued.accessToken,
        refreshToken: issued.refreshToken,
        tokenType: 'Bearer',
        scope: 'read',
        expiresAt: issued.expiresAt,
      },
      { appUserId: null, appUserName: null, organizationId: null, organizationName: null },
      Date.now(),
    );
    return issued.accessToken;
  }

  function access(config: Record<string, unknown>, env: NodeJS.ProcessEnv) {
    return buildLinearAccess({
      config: linearSchema.parse({ apiUrl: fake.graphqlUrl, ...config }),
      gateway: { host: '127.0.0.1', port: 1 },
      env,
      db: store.db,
      clock: systemClock(),
      logger: silentLogger(),
    });
  }

  /** The Authorization header the fake saw for one call made with this setup. */
  async function headerUsed(
    config: Record<string, unknown>,
    env: NodeJS.ProcessEnv,
  ): Promise<{ source: string | undefined; authorization: string | undefined }> {
    const linear = access(config, env);
    const before = fake.requests.length;
    await linear.api.teamLabels('any');
    return { source: (await linear.tokens.describe())?.label, authorization: fake.requests[before]?.authorization };
  }

  it('uses the config token first, then the stored OAuth tokens, then LINEAR_ACCESS_TOKEN, then LINEAR_API_KEY', async () => {
    const envAccess = fake.issueTokens().accessToken;
    const env = { LINEAR_ACCESS_TOKEN: envAccess, LINEAR_API_KEY: 'lin_api_env', NAMED: 'lin_api_from_named_env' };
    const oauth = await storeOAuth();
    assert.deepEqual(await headerUsed({ apiKey: 'lin_api_config', apiKeyEnv: 'NAMED' }, env), {
      source: 'linear.apiKey',
      authorization: 'lin_api_config',
    });
    assert.deepEqual(await headerUsed({ apiKeyEnv: 'NAMED' }, env), {
      source: 'linear.apiKeyEnv (NAMED)',
      authorization: 'lin_api_from_named_env',
    });
    assert.deepEqual(await headerUsed({}, env), { source: 'oauth (default)', authorization: `Bearer ${oauth}` });
    await new LinearOAuthStore(store.db).deleteTokens();
    assert.deepEqual(await headerUsed({}, env), {
      source: 'env LINEAR_ACCESS_TOKEN',
      authorization: `Bearer ${envAccess}`,
    });
    assert.deepEqual(await headerUsed({}, { LINEAR_API_KEY: 'lin_api_env' }), {
      source: 'env LINEAR_API_KEY',
      authorization: 'lin_api_env',
    });
  });

  it('fails as auth, naming every way to set a token, when there is none', async () => {
    const linear = access({}, {});
    assert.equal(await linear.tokens.describe(), undefined);
    const error = await linear.api.getIssue('ENG-1').catch((e: unknown) => e);
    assert.ok(error instanceof LinearApiError);
    assert.equal(error.kind, 'auth');
    assert.match(error.message, /linear\.apiKey.*switchboard linear connect.*LINEAR_ACCESS_TOKEN \/ LINEAR_API_KEY/);
    assert.equal(fake.requests.length, 0);
  });

  it('does not refresh a static key that Linear refuses: one request, then auth', async () => {
    const linear = access({ apiKey: 'lin_api_revoked' }, {});
    await assert.rejects(
      linear.api.getIssue('ENG-1'),
      (e: unknown) => e instanceof LinearApiError && e.kind === 'auth' && /linear\.apiKey/.test(e.message),
    );
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.tokenRequests.length, 0);
  });

  it('refuses to start an enabled Linear without a webhook signing secret, naming the key', () => {
    const config = linearSchema.parse({ enabled: true });
    assert.throws(
      () => requireLinearSecrets(config, {}),
      (e: unknown) =>
        e instanceof AppError && e.field === 'linear.webhookSecret' && /LINEAR_WEBHOOK_SECRET/.test(e.message),
    );
    assert.equal(requireLinearSecrets(config, { LINEAR_WEBHOOK_SECRET: 's3cret' }).webhookSecret, 's3cret');
    assert.equal(
      requireLinearSecrets(linearSchema.parse({ enabled: true, webhookSecret: 'from-config' }), {
        LINEAR_WEBHOOK_SECRET: 'env',
      }).webhookSecret,
      'from-config',
    );
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestStore } from '../../test/support/test-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { systemClock } from '../core/clock.ts';
import { configSchema } from '../core/config.ts';
import { silentLogger } from '../core/logger.ts';
import { createGithubIntegration } from './integration.ts';

describe('createGithubIntegration', () => {
  let store: TestStore;
  before(async () => {
    store = await openTestStore();
  });
  after(async () => {
    await store.close();
  });

  function build(github: Record<string, unknown>, env: NodeJS.ProcessEnv, gateway: Record<string, unknown> = {}) {
    return createGithubIntegration({
      config: configSchema.parse({ github: { enabled: true, ...github }, gateway }),
      env,
      db: store.db,
      clock: systemClock(),
      logger: silentLogger(),
    });
  }

  it('refuses to start without credentials, saying where it looked', () => {
    assert.throws(() => build({ tokenEnv: 'MY_TOKEN' }, {}), /no credentials: .*MY_TOKEN/);
  });

  it('serves the webhook only with a secret', () => {
    assert.equal(build({}, { GITHUB_TOKEN: 't' }).webhook, undefined);
    assert.ok(build({}, { GITHUB_TOKEN: 't', GITHUB_WEBHOOK_SECRET: 's' }).webhook);
    assert.ok(build({ webhookSecret: 's' }, { GITHUB_TOKEN: 't' }).webhook);
  });

  it('links sessions on the public URL, else on loopback and the port', () => {
    assert.equal(
      build({}, { GITHUB_TOKEN: 't' }, { publicUrl: 'https://sb.example' }).pageBase(),
      'https://sb.example',
    );
    assert.equal(build({}, { GITHUB_TOKEN: 't' }, { port: 7777 }).pageBase(), 'http://127.0.0.1:7777');
  });
});

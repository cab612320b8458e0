import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openManagerFixture } from '../../test/support/manager-on-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { loadConfig } from '../core/config-load.ts';
import { silentLogger } from '../core/logger.ts';
import { createLinearIntegration } from './integration.ts';

describe('createLinearIntegration', () => {
  it('refuses to build Linear without a webhook signing secret, or when it is turned off', async () => {
    const m = await openManagerFixture((path) => openTestStore(path));
    try {
      const deps = (overrides: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => ({
        config: loadConfig({ home: m.home, env: {}, overrides: { workspaces: [m.home], ...overrides } }).config,
        env,
        db: m.db,
        clock: m.clock,
        logger: silentLogger(),
        sessions: m.manager,
        logs: m.logs,
      });
      assert.throws(
        () => createLinearIntegration(deps({ 'linear.enabled': true })),
        /webhook signing secret|LINEAR_WEBHOOK_SECRET|webhookSecret/i,
      );
      assert.throws(() => createLinearIntegration(deps({})), /linear\.enabled: the Linear integration is turned off/);
      const linear = createLinearIntegration(
        deps({ 'linear.enabled': true, 'linear.apiKey': 'lin_api_x' }, { LINEAR_WEBHOOK_SECRET: 's3cret' }),
      );
      assert.equal(linear.routes.maxBodyBytes, 1_048_576);
      assert.equal(linear.handler, linear.router);
      assert.equal(linear.services.pipeline, linear.pipeline);
      await linear.start();
      await linear.stop();
    } finally {
      await m.close();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Config } from '../core/config.ts';
import { configSchema } from '../core/config.ts';
import { githubChecks } from './doctor-github.ts';

function config(github: Record<string, unknown>): Config {
  return configSchema.parse({ github });
}

describe('doctor: GitHub', () => {
  it('says nothing while the integration is off', () => {
    assert.deepEqual(githubChecks(config({}), {}), []);
  });

  it('fails without credentials, naming where they are read from', () => {
    const [token] = githubChecks(config({ enabled: true, tokenEnv: 'NO_SUCH_TOKEN' }), {});
    assert.equal(token?.status, 'fail');
    assert.match(token?.detail ?? '', /NO_SUCH_TOKEN/);
    const [app] = githubChecks(config({ enabled: true, app: { appId: 1, installationId: 2 } }), { GITHUB_TOKEN: 't' });
    assert.equal(app?.status, 'fail', 'an App needs its private key (a token is no fallback)');
    assert.match(app?.detail ?? '', /GITHUB_APP_PRIVATE_KEY/);
  });

  it('is ok with a token and a webhook secret, and warns without the secret; never shows the token', () => {
    const [ok] = githubChecks(config({ enabled: true }), { GITHUB_TOKEN: 'ghp_x', GITHUB_WEBHOOK_SECRET: 's' });
    assert.equal(ok?.status, 'ok');
    assert.match(ok?.detail ?? '', /\$GITHUB_TOKEN/);
    assert.doesNotMatch(ok?.detail ?? '', /ghp_x/);
    const [warn] = githubChecks(config({ enabled: true, token: 'ghp_y' }), {});
    assert.equal(warn?.status, 'warn');
    assert.match(warn?.detail ?? '', /not served/);
    assert.doesNotMatch(warn?.detail ?? '', /ghp_y/);
  });
});

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../test/support/temp-dir.ts';
import { startDaemon } from '../main.ts';
import { VERSION } from '../version.ts';
import type { Check } from './doctor.ts';
import { formatChecks, runDoctor } from './doctor.ts';

const fake = (name: string): string => fileURLToPath(new URL(`../../test/support/fake-${name}.mjs`, import.meta.url));

describe('doctor', () => {
  const dir = tempDir('sb-doctor-');
  after(() => dir.remove());

  function write(config: Record<string, unknown>): void {
    const harnesses = {
      claude: { executable: fake('claude') },
      codex: { executable: fake('codex') },
      gemini: { executable: fake('gemini') },
    };
    writeFileSync(
      join(dir.path, 'config.json5'),
      JSON.stringify({ workspaces: [dir.path], harnesses, gateway: { port: 9 }, ...config }),
    );
  }
  const find = (checks: Check[], label: string): Check | undefined => checks.find((c) => c.label === label);

  it('checks Node, the config, the store, the three agent executables and says the daemon is not running', async () => {
    write({});
    const checks = await runDoctor({ home: dir.path, env: {} });
    assert.equal(find(checks, 'Node.js')?.status, 'ok');
    assert.equal(find(checks, 'Config')?.status, 'ok');
    assert.equal(find(checks, 'Store')?.status, 'ok');
    for (const h of ['claude', 'codex', 'gemini']) assert.equal(find(checks, `Harness ${h}`)?.status, 'ok', h);
    assert.match(find(checks, 'Daemon')?.detail ?? '', /not running/);
    assert.equal(find(checks, 'Inference')?.status, 'warn', 'no provider is a warning, not a failure');
    assert.match(formatChecks(checks), /^✔ Node\.js: v/);
  });

  it('fails an inference provider whose key is missing, a Telegram bot without a token, Linear without a signing secret', async () => {
    write({
      inference: { providers: [{ kind: 'anthropic', model: 'm', apiKeyEnv: 'NO_SUCH_KEY_VAR' }] },
      channels: { telegram: { enabled: true, botTokenEnv: 'NO_SUCH_TOKEN_VAR' } },
      linear: { enabled: true, webhookSecretEnv: 'NO_SUCH_SECRET_VAR' },
    });
    const checks = await runDoctor({ home: dir.path, env: {} });
    assert.equal(find(checks, 'Inference')?.status, 'fail');
    assert.match(find(checks, 'Inference')?.detail ?? '', /NO_SUCH_KEY_VAR/);
    assert.equal(find(checks, 'Telegram')?.status, 'fail');
    assert.match(find(checks, 'Telegram')?.detail ?? '', /botToken/);
    assert.equal(find(checks, 'Linear')?.status, 'fail');
    assert.match(find(checks, 'Linear')?.detail ?? '', /linear\.webhookSecret/);
  });

  it('passes them when the secrets are there, and warns about a bot nobody may use', async () => {
    write({
      inference: { providers: [{ kind: 'anthropic', model: 'm', apiKeyEnv: 'KEY_VAR' }] },
      channels: { telegram: { enabled: true, botTokenEnv: 'TOKEN_VAR' } },
      linear: { enabled: true, webhookSecretEnv: 'SECRET_VAR' },
    });
    const checks = await runDoctor({ home: dir.path, env: { KEY_VAR: 'k', TOKEN_VAR: '123:abc', SECRET_VAR: 's' } });
    assert.equal(find(checks, 'Inference')?.status, 'ok');
    assert.equal(find(checks, 'Telegram')?.status, 'warn');
    assert.match(find(checks, 'Telegram')?.detail ?? '', /allowedUserIds is empty/);
    assert.equal(find(checks, 'Linear')?.status, 'ok');
    assert.ok(!formatChecks(checks).includes('123:abc'), 'the token never appears');
  });

  it('reports the running daemon with the details of /healthz, which it asks for with the gateway token', async () => {
    write({});
    const daemon = await startDaemon({
      home: dir.path,
      env: {},
      overrides: { 'gateway.port': 0, 'log.level': 'silent' },
    });
    try {
      const checks = await runDoctor({ home: dir.path, env: {} });
      assert.equal(find(checks, 'Daemon')?.detail, `running at ${daemon.url} (v${VERSION}, 0 active sessions)`);
      const wrongToken = await runDoctor({ home: dir.path, env: { SWITCHBOARD_TOKEN: 'not-the-token' } });
      assert.equal(find(wrongToken, 'Daemon')?.status, 'warn');
      assert.match(find(wrongToken, 'Daemon')?.detail ?? '', /did not accept this gateway token/);
    } finally {
      await daemon.stop();
    }
  });

  it('reports a config it cannot read and stops there', async () => {
    writeFileSync(join(dir.path, 'config.json5'), '{ maxSessions: "many" }');
    const checks = await runDoctor({ home: dir.path, env: {} });
    assert.equal(find(checks, 'Config')?.status, 'fail');
    assert.match(find(checks, 'Config')?.detail ?? '', /maxSessions/);
    assert.equal(find(checks, 'Store'), undefined);
  });
});

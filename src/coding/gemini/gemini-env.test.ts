import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureGatewayAuthSettings, gatewaySettingsContents, geminiHomeFor, geminiSettingsPath } from './gemini-env.ts';

function withHome(fn: (home: string) => void): void {
  const home = mkdtempSync(join(tmpdir(), 'sb-gemini-env-'));
  try {
    fn(home);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

test('gatewaySettingsContents: adds the auth type, keeps everything else, leaves a chosen type alone', () => {
  assert.deepEqual(JSON.parse(gatewaySettingsContents(undefined) ?? ''), {
    security: { auth: { selectedType: 'gemini-api-key' } },
  });
  const merged = JSON.parse(
    gatewaySettingsContents(
      '{"privacy":{"usageStatisticsEnabled":false},"security":{"folderTrust":{"enabled":false},"auth":{"useExternal":false}}}',
    ) ?? '',
  );
  assert.deepEqual(merged, {
    privacy: { usageStatisticsEnabled: false },
    security: { folderTrust: { enabled: false }, auth: { useExternal: false, selectedType: 'gemini-api-key' } },
  });
  assert.equal(gatewaySettingsContents('{"security":{"auth":{"selectedType":"vertex-ai"}}}'), undefined);
  assert.equal(gatewaySettingsContents('{"selectedAuthType":"oauth-personal"}'), undefined);
  assert.throws(() => gatewaySettingsContents('// comment\n{}'));
  assert.throws(() => gatewaySettingsContents('[1]'), /not a JSON object/);
});

test('geminiHomeFor: GEMINI_CLI_HOME, else HOME', () => {
  assert.equal(geminiHomeFor({ GEMINI_CLI_HOME: '/a', HOME: '/b' }), '/a');
  assert.equal(geminiHomeFor({ HOME: '/b' }), '/b');
});

test('ensureGatewayAuthSettings: nothing without GOOGLE_GEMINI_BASE_URL', () => {
  withHome((home) => {
    assert.deepEqual(ensureGatewayAuthSettings({ HOME: home }), { action: 'not-needed' });
    assert.deepEqual(readdirSync(home), []);
  });
});

test('ensureGatewayAuthSettings: creates the file (0600) when missing, then keeps it', () => {
  withHome((home) => {
    const env = { HOME: home, GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:1' };
    const path = geminiSettingsPath(home);
    assert.deepEqual(ensureGatewayAuthSettings(env), { action: 'written', path });
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), {
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(ensureGatewayAuthSettings(env), { action: 'kept', path, authType: 'gemini-api-key' });
    assert.deepEqual(readdirSync(join(home, '.gemini')), ['settings.json'], 'no temp file left behind');
  });
});

test('ensureGatewayAuthSettings: merges into existing settings, never clobbers a chosen type or a file with comments', () => {
  withHome((home) => {
    const path = geminiSettingsPath(home);
    mkdirSync(join(home, '.gemini'));
    writeFileSync(path, '{"ui":{"theme":"Dracula"}}', { mode: 0o644 });
    const env = { HOME: home, GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:1' };
    assert.equal(ensureGatewayAuthSettings(env).action, 'written');
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), {
      ui: { theme: 'Dracula' },
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
    assert.equal(statSync(path).mode & 0o777, 0o644, 'the existing mode is kept');

    writeFileSync(path, '{"security":{"auth":{"selectedType":"oauth-personal"}}}');
    assert.deepEqual(ensureGatewayAuthSettings(env), { action: 'kept', path, authType: 'oauth-personal' });

    const commented = '{\n  // my settings\n  "ui": {}\n}\n';
    writeFileSync(path, commented);
    const result = ensureGatewayAuthSettings(env);
    assert.equal(result.action, 'skipped');
    assert.equal(readFileSync(path, 'utf8'), commented);
  });
});

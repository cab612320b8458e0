import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../test/support/temp-dir.ts';
import { loadConfig } from '../core/config-load.ts';
import type { Check } from './doctor.ts';
import { runDoctor } from './doctor.ts';
import { credentialChecks } from './doctor-credentials.ts';

const fake = (name: string): string => fileURLToPath(new URL(`../../test/support/fake-${name}.mjs`, import.meta.url));

describe('doctor: harness credentials', () => {
  const dir = tempDir('sb-doctor-creds-');
  after(() => dir.remove());
  let n = 0;
  /** A fresh home for the agents (no login files) and a config with the given overrides. */
  function setup(overrides: Record<string, unknown> = {}): {
    home: string;
    config: ReturnType<typeof loadConfig>['config'];
  } {
    n += 1;
    const home = join(dir.path, `home-${n}`);
    mkdirSync(home, { recursive: true });
    return { home, config: loadConfig({ home, env: {}, overrides: { workspaces: [home], ...overrides } }).config };
  }
  const byLabel = (checks: Check[]): Record<string, Check> => Object.fromEntries(checks.map((c) => [c.label, c]));

  it('says which credentials are missing and where to put them (harnesses.<name>.env)', () => {
    const { home, config } = setup();
    const c = byLabel(credentialChecks(config, { HOME: home }));
    assert.equal(c['Credentials claude']?.status, 'fail', 'the default harness cannot run');
    assert.equal(c['Credentials codex']?.status, 'warn');
    assert.equal(c['Credentials gemini']?.status, 'warn');
    assert.match(
      c['Credentials claude']?.detail ?? '',
      /^missing: set ANTHROPIC_API_KEY in harnesses\.claude\.env .*log in to Claude Code/,
    );
    assert.match(
      c['Credentials codex']?.detail ?? '',
      /^missing: set OPENAI_API_KEY in harnesses\.codex\.env .*codex login/,
    );
    assert.match(c['Credentials gemini']?.detail ?? '', /^missing: set GEMINI_API_KEY in harnesses\.gemini\.env/);
  });

  it("finds keys in harnesses.<name>.env or the daemon environment, and the CLIs' own logins", () => {
    const { home, config } = setup({ 'harnesses.claude.env': { ANTHROPIC_API_KEY: 'sk-ant-x' } });
    mkdirSync(join(home, '.codex'));
    writeFileSync(join(home, '.codex', 'auth.json'), '{}');
    const c = byLabel(credentialChecks(config, { HOME: home, GEMINI_API_KEY: 'g' }));
    assert.deepEqual(c['Credentials claude'], {
      status: 'ok',
      label: 'Credentials claude',
      detail: 'ANTHROPIC_API_KEY is set',
    });
    assert.deepEqual(c['Credentials codex'], {
      status: 'ok',
      label: 'Credentials codex',
      detail: `logged in (${join(home, '.codex', 'auth.json')})`,
    });
    assert.deepEqual(c['Credentials gemini'], {
      status: 'ok',
      label: 'Credentials gemini',
      detail: 'GEMINI_API_KEY is set',
    });
    assert.ok(!JSON.stringify(c).includes('sk-ant-x'), 'a key never appears');
  });

  it('takes a logged-in Claude Code, and the key of a configured Codex provider', () => {
    const { home, config } = setup({
      'harnesses.codex.provider': { id: 'mock', baseUrl: 'http://127.0.0.1:9/v1', envKey: 'MOCK_KEY' },
    });
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', '.credentials.json'), '{}');
    const c = byLabel(credentialChecks(config, { HOME: home, OPENAI_API_KEY: 'o' }));
    assert.equal(c['Credentials claude']?.status, 'ok');
    assert.equal(c['Credentials codex']?.status, 'warn', 'OPENAI_API_KEY does not serve a custom provider');
    assert.match(c['Credentials codex']?.detail ?? '', /set MOCK_KEY/);
  });

  it('runs as part of doctor', async () => {
    const home = join(dir.path, 'doctor-home');
    mkdirSync(home, { recursive: true });
    const harnesses = {
      claude: { executable: fake('claude') },
      codex: { executable: fake('codex') },
      gemini: { executable: fake('gemini') },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify({ workspaces: [home], harnesses, gateway: { port: 9 } }));
    const checks = await runDoctor({ home, env: { HOME: home, ANTHROPIC_API_KEY: 'k' } });
    assert.deepEqual(
      checks.filter((c) => c.label.startsWith('Credentials')).map((c) => [c.label, c.status]),
      [
        ['Credentials claude', 'ok'],
        ['Credentials codex', 'warn'],
        ['Credentials gemini', 'warn'],
      ],
    );
  });
});

import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../../test/support/temp-dir.ts';
import { runDoctor } from './doctor.ts';
import { configModeChecks } from './doctor-config-mode.ts';

const fake = (name: string): string => fileURLToPath(new URL(`../../test/support/fake-${name}.mjs`, import.meta.url));

describe('doctor: config.json5 permissions', () => {
  const dir = tempDir('sb-doctor-mode-');
  after(() => dir.remove());
  const path = join(dir.path, 'config.json5');

  it('warns in the doctor report when config.json5 is readable by others, naming the file and the fix', async () => {
    const harnesses = {
      claude: { executable: fake('claude') },
      codex: { executable: fake('codex') },
      gemini: { executable: fake('gemini') },
    };
    writeFileSync(path, JSON.stringify({ workspaces: [dir.path], harnesses, gateway: { port: 9 } }));
    chmodSync(path, 0o644);
    const checks = await runDoctor({ home: dir.path, env: {} });
    const check = checks.find((c) => c.label === 'Config permissions');
    assert.equal(check?.status, 'warn');
    assert.match(check?.detail ?? '', /config\.json5 is 0644: its group and every other user can read it.*chmod 600/);
  });

  it('is ok for an owner-only file, warns for a group-writable one, says nothing without a file', () => {
    writeFileSync(path, '{}');
    chmodSync(path, 0o600);
    assert.deepEqual(
      configModeChecks(path, true).map((c) => c.status),
      ['ok'],
    );
    chmodSync(path, 0o620);
    assert.match(configModeChecks(path, true)[0]?.detail ?? '', /0620: its group can write it/);
    assert.deepEqual(configModeChecks(join(dir.path, 'missing.json5'), false), []);
  });
});

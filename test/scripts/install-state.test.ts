// scripts/ensure-install.mjs (npm's prestart and pretest): a fresh clone installs itself, an installed one is left alone.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ensureInstall, installState } from '../../scripts/install-state.mjs';
import { tempDir } from '../support/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('ensure-install', () => {
  const dir = tempDir('sb-install-');
  after(() => dir.remove());
  let n = 0;

  /** A project folder with a lock file and, when given, what npm last installed. */
  function project(installed?: Record<string, { version: string }>, options: { nodeBinary?: boolean } = {}): string {
    n += 1;
    const root = join(dir.path, `p${n}`);
    mkdirSync(root, { recursive: true });
    const packages = {
      '': { name: 'x', version: '1.0.0' },
      'node_modules/commander': { version: '15.1.0' },
      'node_modules/node': { version: '24.21.0', dev: true, hasInstallScript: true },
      'node_modules/fsevents': { version: '2.3.3', optional: true },
    };
    writeFileSync(join(root, 'package-lock.json'), JSON.stringify({ name: 'x', lockfileVersion: 3, packages }));
    if (installed) {
      mkdirSync(join(root, 'node_modules'), { recursive: true });
      writeFileSync(
        join(root, 'node_modules', '.package-lock.json'),
        JSON.stringify({ name: 'x', lockfileVersion: 3, packages: installed }),
      );
      if (options.nodeBinary !== false) {
        mkdirSync(join(root, 'node_modules', 'node', 'bin'), { recursive: true });
        writeFileSync(join(root, 'node_modules', 'node', 'bin', 'node'), '');
      }
    }
    return root;
  }
  const reason = (root: string): string => {
    const state = installState(root);
    return state.kind === 'fresh' ? 'fresh' : state.reason;
  };
  const both = { 'node_modules/commander': { version: '15.1.0' }, 'node_modules/node': { version: '24.21.0' } };

  it('is fresh when node_modules matches package-lock.json (optional packages for other platforms may be absent)', () => {
    assert.deepEqual(installState(project(both)), { kind: 'fresh' });
  });

  it('is missing without node_modules, stale when a package is absent or at another version, or the pinned Node is missing', () => {
    assert.equal(installState(project()).kind, 'missing');
    assert.deepEqual(installState(project({ 'node_modules/node': { version: '24.21.0' } })), {
      kind: 'stale',
      reason: 'commander is not installed',
    });
    assert.match(
      reason(project({ ...both, 'node_modules/commander': { version: '14.0.0' } })),
      /commander is 14\.0\.0, package-lock\.json wants 15\.1\.0/,
    );
    assert.match(reason(project(both, { nodeBinary: false })), /pinned Node/);
    const noHidden = project(both);
    writeFileSync(join(noHidden, 'node_modules', '.package-lock.json'), '');
    assert.equal(installState(noHidden).kind, 'stale');
  });

  it('runs `npm ci` quietly (argument array, through the npm that runs the script) only when something is missing', () => {
    const record = join(dir.path, 'npm-calls.json');
    const fakeNpm = join(dir.path, 'fake-npm-cli.js');
    writeFileSync(
      fakeNpm,
      `require('node:fs').appendFileSync(${JSON.stringify(record)}, JSON.stringify({ args: process.argv.slice(2), cwd: process.cwd() }) + '\\n');\n`,
    );
    const env = { ...process.env, npm_execpath: fakeNpm };
    const fresh = project(both);
    assert.equal(ensureInstall(fresh, env), 0);
    const missing = project();
    assert.equal(ensureInstall(missing, env), 0);
    const calls = readFileSync(record, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { args: string[]; cwd: string });
    assert.deepEqual(calls, [{ args: ['ci', '--no-audit', '--no-fund', '--loglevel=error'], cwd: missing }]);
  });

  it('reports a failing npm ci with its exit code', () => {
    const failing = join(dir.path, 'failing-npm-cli.js');
    writeFileSync(failing, 'process.exit(7);\n');
    assert.equal(ensureInstall(project(), { ...process.env, npm_execpath: failing }), 7);
  });

  it("package.json runs it before `npm start` and `npm test`, and this checkout is fresh (so CI's `npm ci` then `npm test` does not install twice)", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.prestart, 'node scripts/ensure-install.mjs');
    assert.equal(pkg.scripts.pretest, 'node scripts/ensure-install.mjs');
    assert.deepEqual(installState(ROOT), { kind: 'fresh' });
  });
});

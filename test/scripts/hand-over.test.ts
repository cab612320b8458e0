// bin/hand-over.js: an older Node that starts bin/switchboard.js hands over to the pinned Node 24; and npm, which runs
// on the system Node, keeps its warnings (EBADENGINE on every `npx switchboard`) to itself through the project .npmrc.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const HAND_OVER = new URL('../../bin/hand-over.js', import.meta.url).href;
const PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));
const NPMRC = fileURLToPath(new URL('../../.npmrc', import.meta.url));

function handOver(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `import(${JSON.stringify(HAND_OVER)}).then((m) => m.handOver(${JSON.stringify(args)}))`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({
        code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
        stdout: String(stdout),
        stderr: String(stderr),
      });
    });
  });
}

describe('bin hand-over to the pinned Node', () => {
  it('runs the command under node_modules/node/bin/node with the same arguments and exit code', async () => {
    const version = await handOver(['--version']);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    const bad = await handOver(['sessions', '--url', 'nope']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--url "nope"/);
  });

  it('package.json pins the runtime (engines >= 22.13, Node 24), and the project .npmrc keeps npm warnings such as EBADENGINE out of the CLI', () => {
    const pkg = JSON.parse(readFileSync(PACKAGE, 'utf8')) as {
      engines: { node: string };
      devDependencies: Record<string, string>;
    };
    assert.equal(pkg.engines.node, '>=22.13');
    assert.match(pkg.devDependencies.node ?? '', /^\^24\./, 'the runtime is the pinned Node 24');
    const npmrc = readFileSync(NPMRC, 'utf8');
    assert.match(
      npmrc,
      /^loglevel=error$/m,
      'npm under an older system Node prints no EBADENGINE warning on npx switchboard',
    );
  });
});

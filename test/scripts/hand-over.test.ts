// bin/hand-over.js: an older Node that starts bin/switchboard.js hands over to the pinned Node 24; and npm, which runs
// on the system Node, is not told the package needs a newer one (no EBADENGINE on every `npx switchboard`).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const HAND_OVER = new URL('../../bin/hand-over.js', import.meta.url).href;
const PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));

function handOver(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `import(${JSON.stringify(HAND_OVER)}).then((m) => m.handOver(${JSON.stringify(args)}))`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
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

  it('package.json asks npm only for a Node that can run npm and the launcher (20.17+), not the runtime the package pins', () => {
    const pkg = JSON.parse(readFileSync(PACKAGE, 'utf8')) as { engines: { node: string }; devDependencies: Record<string, string> };
    const floor = /^>=(\d+)\.(\d+)$/.exec(pkg.engines.node);
    assert.ok(floor, `engines.node is a plain floor: ${pkg.engines.node}`);
    assert.ok(Number(floor[1]) < 20 || (Number(floor[1]) === 20 && Number(floor[2]) <= 17), 'npm under Node 20.17 does not warn EBADENGINE');
    assert.match(pkg.devDependencies.node ?? '', /^\^24\./, 'the runtime is the pinned Node 24');
  });
});

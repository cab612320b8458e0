// A SIGTERM that reaches the daemon while it is still starting (here: its Telegram connector is still connecting) stops
// it cleanly once it has started: exit code 0, not killed by the signal halfway (a supervisor stopping it at boot, a
// test stopping it the moment daemon.json names its URL).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const TOKEN = '123456:signal-test-token';
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

it('stops cleanly on a SIGTERM that arrives while it is still starting', async (t) => {
  const dir = tempDir('sb-signal-');
  t.after(() => dir.remove());
  // A Bot API that holds getMe (the Telegram connector's start) until the test lets it answer.
  let release = (): void => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let asked = false;
  const api = createServer((req, res) => {
    const answer = (result: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, result }));
    };
    if (req.url?.endsWith('/getMe')) {
      asked = true;
      void released.then(() =>
        answer({ id: 1, is_bot: true, first_name: 'Switchboard', username: 'switchboard_test_bot' }),
      );
    } else answer(req.url?.endsWith('/getUpdates') ? [] : true);
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  t.after(() => api.close());
  const home = join(dir.path, 'home');
  mkdirSync(home, { recursive: true });
  const apiRoot = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const config = { channels: { telegram: { enabled: true, botToken: TOKEN, allowedUserIds: [42], apiRoot } } };
  writeFileSync(join(home, 'config.json5'), JSON.stringify(config));

  const child = spawn(process.execPath, [MAIN, 'start', '--port', '0'], {
    env: { ...process.env, SWITCHBOARD_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(() => void child.kill('SIGKILL'));
  await waitFor('the Telegram connector to be starting', () => asked, 30_000);
  child.kill('SIGTERM');
  release();
  assert.deepEqual(await exited, { code: 0, signal: null }, `stopped cleanly:\n${output}`);
  assert.match(output, /"signal":"SIGTERM".*"msg":"stopping"/);
});

import assert from 'node:assert/strict';
import { getPriority, tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import type { AgentChild } from './agent-child.ts';
import { SpawnBroker } from './spawn-broker.ts';

function collect(child: AgentChild): Promise<{ out: string; err: string; code: number | null; signal: NodeJS.Signals | null }> {
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ out, err, code, signal })));
}

describe('spawn broker', () => {
  const broker = new SpawnBroker();

  it('relays stdin, stdout, stderr and the exit code; the pid is known once the process started; it runs niced', async () => {
    const child = broker.spawn({
      command: process.execPath,
      args: ['-e', `const os = require('node:os'); process.stdin.setEncoding('utf8'); let input = ''; process.stdin.on('data', (d) => (input += d)); process.stdin.on('end', () => { process.stdout.write('got ' + input + ' env ' + process.env.PROBE + ' nice ' + os.getPriority() + '\\n'); process.stderr.write('warned\\n'); process.exitCode = 3; });`],
      cwd: tmpdir(),
      env: { ...process.env, PROBE: 'tagged' },
      stdin: 'pipe',
    });
    assert.equal(child.pid, undefined, 'asked for, not yet started');
    const result = collect(child);
    child.stdin?.end('hello');
    assert.deepEqual(await result, { out: 'got hello env tagged nice 10\n', err: 'warned\n', code: 3, signal: null });
    assert.ok(child.pid && child.pid > 0);
    assert.equal(child.exitCode, 3);
  });

  it('kills on request and reports the signal', async () => {
    const child = broker.spawn({ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000); console.log("up")'], cwd: tmpdir(), env: process.env, stdin: 'ignore' });
    const result = collect(child);
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    assert.equal(getPriority(child.pid), 10);
    assert.equal(child.kill('SIGTERM'), true);
    const { signal } = await result;
    assert.equal(signal, 'SIGTERM');
    assert.equal(child.kill('SIGTERM'), false, 'nothing left to kill');
  });

  it('reports a program that cannot be started as an error, then close', async () => {
    const child = broker.spawn({ command: '/nonexistent/agent-cli', args: [], cwd: tmpdir(), env: process.env, stdin: 'ignore' });
    const error = new Promise<Error>((resolve) => child.once('error', resolve));
    const closed = collect(child);
    assert.match((await error).message, /ENOENT/);
    await closed;
  });
});

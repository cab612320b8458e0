import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import { loadConfig } from '../core/config-load.ts';
import { CliError } from './cli-error.ts';
import { hostProblem, preflightGateway } from './gateway-preflight.ts';

async function listen(
  handler: Parameters<typeof createServer>[1] = (_req, res) => res.end('hello'),
): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

describe('gateway preflight', () => {
  const dir = tempDir('sb-preflight-');
  after(() => dir.remove());

  function preflight(overrides: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<void> {
    return preflightGateway({ loaded: loadConfig({ home: dir.path, env, overrides }), overrides, env });
  }
  const refused =
    (code: 1 | 2, ...patterns: RegExp[]) =>
    (e: unknown) =>
      e instanceof CliError && e.exitCode === code && patterns.every((p) => p.test(e.message));

  it('accepts host names and IP addresses, and says what is wrong with anything else', () => {
    for (const host of ['127.0.0.1', '::1', 'localhost', 'my-box.local', '0.0.0.0'])
      assert.equal(hostProblem(host), null, host);
    assert.match(hostProblem('http://127.0.0.1') ?? '', /not a URL/);
    assert.match(hostProblem('127.0.0.1:8080') ?? '', /without a port/);
    assert.match(hostProblem('my host') ?? '', /not a host name or IP address/);
    assert.match(hostProblem('') ?? '', /not a host name/);
  });

  it('refuses an invalid gateway.host before anything starts, naming the key and where it came from (exit 2)', async () => {
    await assert.rejects(
      preflight({ 'gateway.host': 'not a host', 'gateway.port': 0 }),
      refused(2, /gateway\.host "not a host"/, /--host/),
    );
    await assert.rejects(
      preflight({ 'gateway.port': 0 }, { SWITCHBOARD_HOST: '127.0.0.1:80' }),
      refused(2, /gateway\.host/, /SWITCHBOARD_HOST/, /gateway\.port/),
    );
    writeFileSync(join(dir.path, 'config.json5'), '{ gateway: { host: "no-such-host.invalid" } }');
    try {
      await assert.rejects(
        preflight({ 'gateway.port': 0 }),
        refused(2, /gateway\.host "no-such-host\.invalid"/, /config\.json5/, /does not resolve/),
      );
    } finally {
      writeFileSync(join(dir.path, 'config.json5'), '{}');
    }
  });

  it('refuses a non-loopback host without gateway.allowRemote, and an address this machine does not have', async () => {
    await assert.rejects(
      preflight({ 'gateway.host': '0.0.0.0', 'gateway.port': 0 }),
      refused(2, /gateway\.host "0\.0\.0\.0"/, /allowRemote/),
    );
    await assert.rejects(
      preflight({ 'gateway.host': '192.0.2.1', 'gateway.port': 0, 'gateway.allowRemote': true }),
      refused(2, /gateway\.host "192\.0\.2\.1"/, /not an address of this machine/),
    );
  });

  it('passes a free port', async () => {
    await preflight({ 'gateway.port': 0 });
  });

  it('a port taken by another program says so, and names gateway.port and --port', async () => {
    const { server, port } = await listen();
    try {
      await assert.rejects(
        preflight({ 'gateway.port': port }),
        refused(
          1,
          new RegExp(`port ${port} on 127\\.0\\.0\\.1`),
          /another program \(not a switchboard daemon\)/,
          /gateway\.port in .*config\.json5/,
          /--port <n>/,
          /from the command line \(--port\)/,
        ),
      );
    } finally {
      await close(server);
    }
  });

  it('a port taken by a switchboard daemon (its /healthz answers) says so', async () => {
    const { server, port } = await listen((_req, res) => res.end(JSON.stringify({ ok: true, service: 'switchboard' })));
    try {
      await assert.rejects(
        preflight({}, { SWITCHBOARD_PORT: String(port) }),
        refused(1, /another switchboard daemon \(with another state directory/, /SWITCHBOARD_PORT/, /--port/),
      );
    } finally {
      await close(server);
    }
  });

  it('a port taken by the daemon of this state directory (daemon.json) says it is already running', async () => {
    const { server, port } = await listen();
    writeFileSync(
      join(dir.path, 'daemon.json'),
      JSON.stringify({ pid: process.pid, startedAt: 0, version: '0', url: `http://127.0.0.1:${port}`, port }),
    );
    try {
      await assert.rejects(
        preflight({ 'gateway.port': port }),
        refused(1, /the switchboard daemon of this state directory \(pid \d+/, /already running/),
      );
    } finally {
      await close(server);
    }
  });
});

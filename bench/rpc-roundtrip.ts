// JSON-RPC `sessions.list` round trip through the real daemon (Fastify, bearer auth, zod, SQLite) beside a bare
// Node HTTP server answering a JSON POST, measured in the same run with the same client (fetch, keep-alive).
// Run: npm run bench:rpc   (or: npx node bench/rpc-roundtrip.ts [requests] [sessions])
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon } from '../src/main.ts';
import { ScriptedHarness } from '../test/support/scripted-harness.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { percentile, printTable } from './stats.ts';

const requests = Number(process.argv[2] ?? 2_000);
const sessionCount = Number(process.argv[3] ?? 20);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sessions.list', params: {} });

async function measure(url: string, headers: Record<string, string>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < requests + 100; i += 1) {
    const start = performance.now();
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    await response.arrayBuffer();
    if (i >= 100) latencies.push(performance.now() - start); // the first 100 warm up
  }
  return latencies;
}

const bare = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: parsed.id, result: { sessions: [], count: 0 } }));
  });
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const dir = tempDir('sb-bench-rpc-');
const workdir = join(dir.path, 'work');
mkdirSync(workdir);
const claude = new ScriptedHarness('claude');
const daemon = await startDaemon({
  home: join(dir.path, 'home'),
  env: {},
  overrides: { 'gateway.port': 0, workspaces: [dir.path], 'log.level': 'silent', maxSessions: sessionCount + 1, maxPersistedSessions: sessionCount + 1 },
  harnesses: { claude, codex: new ScriptedHarness('codex'), gemini: new ScriptedHarness('gemini') },
});
try {
  for (let i = 0; i < sessionCount; i += 1) {
    const s = daemon.services.sessions.launch({ prompt: `bench session ${i}`, workdir, originChannel: 'cli' });
    if (i % 2 === 0) daemon.services.sessions.kill(s.id);
  }
  const bareLatencies = await measure(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/rpc`, {});
  const sbLatencies = await measure(`${daemon.url}/rpc`, { authorization: `Bearer ${daemon.token}` });
  const row = (label: string, l: number[]): (string | number)[] => {
    const total = l.reduce((a, b) => a + b, 0);
    return [label, (l.length / total) * 1000, percentile(l, 50), percentile(l, 99)];
  };
  console.log(`${requests} sequential round trips on loopback; switchboard lists ${sessionCount} stored sessions`);
  printTable(['server', 'req/s', 'p50 ms', 'p99 ms'], [row('bare node:http JSON echo', bareLatencies), row('switchboard sessions.list', sbLatencies)]);
  console.log(`switchboard p50 = ${(percentile(sbLatencies, 50) / percentile(bareLatencies, 50)).toFixed(2)}x bare`);
} finally {
  await daemon.stop();
  bare.close();
  dir.remove();
}

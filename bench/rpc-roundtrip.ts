// JSON-RPC `sessions.list` round trip through the real daemon (Fastify, bearer auth, zod, SQLite) beside a bare
// Node HTTP server answering a JSON POST, measured in the same run with the same client (fetch, keep-alive). The bare
// server answers twice: an empty list (the platform's floor), and the very bytes the daemon answered (the same
// response, serialized once before the run), so that the second ratio is the daemon's own cost for the same transfer.
// All three are warmed up first, then measured in interleaved rounds (each round asks each of them in turn, the order
// rotating), so neither the client's own warm-up nor a drift of the machine favours whichever is measured first.
// Run: npm run bench:rpc   (or: npx node bench/rpc-roundtrip.ts [requests] [sessions])
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startDaemon } from '../src/main.ts';
import { ScriptedHarness } from '../test/support/scripted-harness.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { percentile, printTable } from './stats.ts';

const requests = Number(process.argv[2] ?? 2_000);
const sessionCount = Number(process.argv[3] ?? 20);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sessions.list', params: {} });

/** `count` sequential round trips to `url`; their latencies (ms). */
async function roundTrips(url: string, headers: Record<string, string>, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const start = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    await response.arrayBuffer();
    latencies.push(performance.now() - start);
  }
  return latencies;
}

interface Target {
  url: string;
  headers: Record<string, string>;
  latencies: number[];
}

/** Warms every target up (300 round trips each), then measures `requests` each in 10 rounds, rotating their order. */
async function measureInterleaved(targets: Target[]): Promise<void> {
  for (const t of targets) await roundTrips(t.url, t.headers, 300);
  const rounds = 10;
  for (let round = 0; round < rounds; round += 1) {
    for (let k = 0; k < targets.length; k += 1) {
      const t = targets[(round + k) % targets.length] as Target;
      t.latencies.push(...(await roundTrips(t.url, t.headers, Math.ceil(requests / rounds))));
    }
  }
}

/** What the bare server answers on /same: the daemon's own result, once it is known (before the measurement). */
let sameResult: unknown = null;
const bare = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
    const result = req.url === '/same' ? sameResult : { sessions: [], count: 0 };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: parsed.id, result }));
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
  overrides: {
    'gateway.port': 0,
    workspaces: [dir.path],
    'log.level': 'silent',
    maxSessions: sessionCount + 1,
    maxPersistedSessions: sessionCount + 1,
  },
  harnesses: { claude, codex: new ScriptedHarness('codex'), gemini: new ScriptedHarness('gemini') },
});
try {
  for (let i = 0; i < sessionCount; i += 1) {
    const s = await daemon.services.sessions.launch({ prompt: `bench session ${i}`, workdir, originChannel: 'cli' });
    if (i % 2 === 0) await daemon.services.sessions.kill(s.id);
  }
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
  const daemonHeaders = { authorization: `Bearer ${daemon.token}` };
  const answered = (await (
    await fetch(`${daemon.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...daemonHeaders },
      body,
    })
  ).json()) as { result: unknown };
  sameResult = answered.result;
  const sameBytes = Buffer.byteLength(JSON.stringify(answered));
  const bareEmpty: Target = { url: `${bareUrl}/rpc`, headers: {}, latencies: [] };
  const bareSame: Target = { url: `${bareUrl}/same`, headers: {}, latencies: [] };
  const switchboard: Target = { url: `${daemon.url}/rpc`, headers: daemonHeaders, latencies: [] };
  await measureInterleaved([bareEmpty, bareSame, switchboard]);
  const bareLatencies = bareEmpty.latencies;
  const bareSameLatencies = bareSame.latencies;
  const sbLatencies = switchboard.latencies;
  const row = (label: string, l: number[]): (string | number)[] => {
    const total = l.reduce((a, b) => a + b, 0);
    return [label, (l.length / total) * 1000, percentile(l, 50), percentile(l, 99)];
  };
  console.log(
    `${requests} sequential round trips each, interleaved in 10 rounds after a warm-up; switchboard lists ${sessionCount} stored sessions`,
  );
  printTable(
    ['server', 'req/s', 'p50 ms', 'p99 ms'],
    [
      row('bare node:http JSON, empty list', bareLatencies),
      row(`bare node:http JSON, same ${sameBytes}-byte answer`, bareSameLatencies),
      row('switchboard sessions.list', sbLatencies),
    ],
  );
  console.log(
    `switchboard p50 = ${(percentile(sbLatencies, 50) / percentile(bareLatencies, 50)).toFixed(2)}x bare (empty list), ${(percentile(sbLatencies, 50) / percentile(bareSameLatencies, 50)).toFixed(2)}x bare (same answer); p99 ${percentile(sbLatencies, 99).toFixed(2)} ms`,
  );
} finally {
  await daemon.stop();
  bare.close();
  dir.remove();
}

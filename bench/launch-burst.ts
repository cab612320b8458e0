// A launch burst: N sessions launched at once over JSON-RPC (`sessions.launch`, the fake Claude Code CLI through the
// real harness, store and logs) until every one has ended, beside a bare relay in the same run: the same process
// spawning the same fake N times with piped stdio and reading its lines until all have exited. Meanwhile a worker
// thread asks GET /healthz every 5 ms (a bare one served by this process, then the daemon's), so the figures show how
// long the event loop was kept from answering. On a small machine the burst's own CPU (N Node processes starting)
// weighs on every figure. It also prints the daemon process's event-loop delay (max, p99) and CPU time over the burst.
// Run: npm run bench:burst   (or: node bench/launch-burst.ts [sessions])
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startDaemon } from '../src/main.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { percentile, printTable } from './stats.ts';
import { bareRelay, FAKE_CLAUDE } from './support/bare-relay.ts';
import { formatCpu, measureCpu } from './support/cpu-split.ts';

const count = Number(process.argv[2] ?? 200);

/**
 * Polls `url` from a worker thread every 5 ms until stopped; `ready` resolves after 20 warm-up answers (not counted),
 * `stop` with each later answer's latency (ms).
 */
function pollHealth(url: string): { ready: Promise<void>; stop: () => Promise<number[]> } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const latencies = [];
     let running = true;
     parentPort.on('message', () => { running = false; });
     (async () => {
       for (let i = 0; running; i += 1) {
         const start = performance.now();
         try { const r = await fetch(workerData.url, { signal: AbortSignal.timeout(60000) }); await r.arrayBuffer(); } catch {}
         if (i >= 20) latencies.push(performance.now() - start);
         if (i === 20) parentPort.postMessage('ready');
         await new Promise((r) => setTimeout(r, 5));
       }
       parentPort.postMessage(latencies);
     })();`,
    { eval: true, workerData: { url } },
  );
  const ready = new Promise<void>((resolve) => worker.once('message', () => resolve()));
  return {
    ready,
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (latencies: number[]) => void worker.terminate().then(() => resolve(latencies)));
        worker.postMessage('stop');
      }),
  };
}

const dir = tempDir('sb-bench-burst-');
const workdir = join(dir.path, 'work');
mkdirSync(workdir);
const bare = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const daemon = await startDaemon({
  home: join(dir.path, 'home'),
  env: {},
  overrides: {
    'gateway.port': 0,
    workspaces: [dir.path],
    'log.level': 'silent',
    maxSessions: count + 1,
    maxPersistedSessions: count * 4,
    'harnesses.claude.executable': FAKE_CLAUDE,
  },
});
try {
  const rpc = (method: string, params: Record<string, unknown>) =>
    fetch(`${daemon.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    }).then(async (r) => (await r.json()) as { result?: { id: string }; error?: { message: string } });

  async function burst(): Promise<number> {
    const ended = new Set<string>();
    let all!: () => void;
    const done = new Promise<void>((resolve) => (all = resolve));
    const ids = new Set<string>();
    const off = daemon.services.sessions.on((signal) => {
      if (signal.type !== 'ended') return;
      ended.add(signal.session.id);
      if (ids.size === count && [...ids].every((id) => ended.has(id))) all();
    });
    const start = performance.now();
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        rpc('sessions.launch', { prompt: `burst ${i}`, workdir, multiTurnDisabled: true, originChannel: 'bench' }),
      ),
    );
    for (const a of answers) {
      if (!a.result) throw new Error(`launch failed: ${a.error?.message}`);
      ids.add(a.result.id);
    }
    if ([...ids].every((id) => ended.has(id))) all();
    await done;
    off();
    return performance.now() - start;
  }

  // Warm both paths once (module caches, the page cache for the fake), then measure.
  await bareRelay(workdir, count);
  const rows: (string | number)[][] = [];
  const bareHealth = pollHealth(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/healthz`);
  await bareHealth.ready;
  const bareCpu = measureCpu();
  const bareMs = await bareRelay(workdir, count);
  const bareSplit = bareCpu();
  const bareLat = await bareHealth.stop();
  const sbHealth = pollHealth(`${daemon.url}/healthz`);
  await sbHealth.ready;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const sbCpu = measureCpu();
  const sbMs = await burst();
  const sbSplit = sbCpu();
  loop.disable();
  const sbLat = await sbHealth.stop();
  if (process.env.BURST_DEBUG)
    console.log(
      'slowest healthz (index, ms):',
      sbLat
        .map((l, i) => [i, Math.round(l)])
        .sort((a, b) => (b[1] as number) - (a[1] as number))
        .slice(0, 8),
      'of',
      sbLat.length,
    );
  rows.push([
    `bare relay: spawn ${count} fakes, read their lines`,
    bareMs,
    percentile(bareLat, 50),
    percentile(bareLat, 99),
    Math.max(...bareLat),
  ]);
  rows.push([
    `switchboard: ${count} sessions.launch over RPC, until ended`,
    sbMs,
    percentile(sbLat, 50),
    percentile(sbLat, 99),
    Math.max(...sbLat),
  ]);
  console.log(
    `launch burst: ${count} fake Claude Code sessions at once; /healthz asked every 5 ms from a worker thread`,
  );
  printTable(['path', 'total ms', 'healthz p50 ms', 'healthz p99 ms', 'healthz max ms'], rows);
  console.log(
    `switchboard burst = ${(sbMs / bareMs).toFixed(2)}x the bare relay; /healthz max ${Math.max(...sbLat).toFixed(1)} ms (bare ${Math.max(...bareLat).toFixed(1)} ms)`,
  );
  console.log(
    `daemon over the burst: event-loop delay max ${(loop.max / 1e6).toFixed(0)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms; CPU ${sbSplit.userMs.toFixed(0)} ms user + ${sbSplit.systemMs.toFixed(0)} ms system`,
  );
  // On a small machine both paths are bound by CPU: the agents' start-up is the same work on both sides, so what the
  // daemon spends beside it is what the ratio shows (this process also runs the /healthz poller and the RPC client).
  console.log(`CPU, bare relay: ${formatCpu(bareSplit)}; switchboard: ${formatCpu(sbSplit)}`);
} finally {
  await daemon.stop();
  bare.close();
  dir.remove();
}

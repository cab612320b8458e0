// A launch burst: N sessions launched at once over JSON-RPC (`sessions.launch`, the fake Claude Code CLI through the
// real harness, store and logs) until every one has ended, beside a bare relay in the same run: the same process
// spawning the same fake N times with piped stdio and reading its lines until all have exited. Meanwhile a worker
// thread asks GET /healthz every 5 ms (a bare one served by this process, then the daemon's), so the figures show how
// long the event loop was kept from answering. On a small machine the burst's own CPU (N Node processes starting)
// weighs on every figure: both paths are warmed up once, then measured in alternating rounds and compared by their
// medians, and the poller and the RPC client use node:http with keep-alive (fetch cost this process CPU the bare relay,
// whose blocked loop leaves its poller waiting, never paid). It also prints the daemon's event-loop delay and the CPU
// of each round, split between the agents and this process.
// Run: npm run bench:burst   (or: node bench/launch-burst.ts [sessions] [rounds])
import { mkdirSync } from 'node:fs';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startDaemon } from '../src/main.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { httpCall } from '../test/support/web-http.ts';
import { percentile, printTable } from './stats.ts';
import { bareRelay, FAKE_CLAUDE } from './support/bare-relay.ts';
import type { CpuSplit } from './support/cpu-split.ts';
import { formatCpu, measureCpu } from './support/cpu-split.ts';

const count = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);

/**
 * Polls `url` from a worker thread every 5 ms until stopped; `ready` resolves after 20 warm-up answers (not counted),
 * `stop` with each later answer's latency (ms).
 */
function pollHealth(url: string): { ready: Promise<void>; stop: () => Promise<number[]> } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const http = require('node:http');
     const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
     const get = () => new Promise((resolve) => {
       const req = http.get(workerData.url, { agent, timeout: 60000 }, (res) => { res.resume(); res.on('end', resolve); });
       req.on('error', resolve);
       req.on('timeout', () => req.destroy());
     });
     const latencies = [];
     let running = true;
     parentPort.on('message', () => { running = false; });
     (async () => {
       for (let i = 0; running; i += 1) {
         const start = performance.now();
         await get();
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
const bareHealthUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/healthz`;
const daemon = await startDaemon({
  home: join(dir.path, 'home'),
  env: {},
  overrides: {
    'gateway.port': 0,
    workspaces: [dir.path],
    'log.level': 'silent',
    maxSessions: count + 1,
    maxPersistedSessions: count * (rounds + 2),
    'harnesses.claude.executable': FAKE_CLAUDE,
  },
});
/** One measured run: its wall time, the /healthz latencies meanwhile, this process's CPU and event-loop delay. */
interface Run {
  ms: number;
  health: number[];
  cpu: CpuSplit;
  loopMaxMs: number;
  loopP99Ms: number;
}

/** Runs `work` while polling `healthUrl`, measuring this process's CPU and event-loop delay over it. */
async function measured(healthUrl: string, work: () => Promise<number>): Promise<Run> {
  const health = pollHealth(healthUrl);
  await health.ready;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const cpu = measureCpu();
  const ms = await work();
  const split = cpu();
  loop.disable();
  return {
    ms,
    health: await health.stop(),
    cpu: split,
    loopMaxMs: loop.max / 1e6,
    loopP99Ms: loop.percentile(99) / 1e6,
  };
}

// The RPC client is node:http with keep-alive (lighter than fetch), so what it spends beside the daemon weighs little.
// Its idle sockets are closed after 5 s (`timeout`), well before the daemon's keep-alive timeout (gateway.bodyTimeoutSec,
// 10 s): a round's sockets sit idle ~9 s while the next bare round runs, and a socket the daemon closed just as the
// client reused it failed that launch with ECONNRESET (in about half the runs). Node's agentKeepAliveTimeoutBuffer does
// not help here: it only shortens an agent `timeout` that is set, and none was.
const agent = new Agent({ keepAlive: true, timeout: 5_000 });
try {
  const port = Number(new URL(daemon.url).port);
  const rpc = async (method: string, params: Record<string, unknown>) => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${daemon.token}` };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    const answer = await httpCall(port, 'POST', '/rpc', headers, body, agent);
    return JSON.parse(answer.body) as { result?: { id: string }; error?: { message: string } };
  };

  async function burst(count: number): Promise<number> {
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

  // Warm both paths once (module caches, the code each path runs, the page cache for the fake), then measure them in
  // alternating rounds (the order swapping each round), so neither a drift of the machine nor the agents' own varying
  // start-up time favours one side; the ratio is that of the medians.
  await bareRelay(workdir, count);
  await burst(count);
  const bareRuns: Run[] = [];
  const sbRuns: Run[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? (['bare', 'sb'] as const) : (['sb', 'bare'] as const);
    for (const side of order) {
      if (side === 'bare') bareRuns.push(await measured(bareHealthUrl, () => bareRelay(workdir, count)));
      else sbRuns.push(await measured(`${daemon.url}/healthz`, () => burst(count)));
    }
  }
  const median = (values: number[]): number => percentile(values, 50);
  const bareMs = median(bareRuns.map((r) => r.ms));
  const sbMs = median(sbRuns.map((r) => r.ms));
  const sbHealth = sbRuns.flatMap((r) => r.health);
  const bareHealth = bareRuns.flatMap((r) => r.health);
  console.log(
    `launch burst: ${count} fake Claude Code sessions at once, ${rounds} alternating rounds after a warm-up of each; /healthz asked every 5 ms from a worker thread`,
  );
  const row = (label: string, runs: Run[], ms: number, health: number[]): (string | number)[] => [
    label,
    runs.map((r) => Math.round(r.ms).toLocaleString('en-US')).join(' / '),
    ms,
    percentile(health, 50),
    percentile(health, 99),
    Math.max(...health),
  ];
  printTable(
    ['path', 'total ms (each round)', 'median ms', 'healthz p50 ms', 'healthz p99 ms', 'healthz max ms'],
    [
      row(`bare relay: spawn ${count} fakes, read their lines`, bareRuns, bareMs, bareHealth),
      row(`switchboard: ${count} sessions.launch over RPC, until ended`, sbRuns, sbMs, sbHealth),
    ],
  );
  console.log(
    `switchboard burst = ${(sbMs / bareMs).toFixed(2)}x the bare relay (medians; each round: ${sbRuns.map((r, i) => (r.ms / (bareRuns[i] as Run).ms).toFixed(2)).join(', ')}); /healthz max ${Math.max(...sbHealth).toFixed(1)} ms over every round (bare ${Math.max(...bareHealth).toFixed(1)} ms)`,
  );
  const worstLoop = sbRuns.reduce((a, b) => (b.loopMaxMs > a.loopMaxMs ? b : a));
  console.log(
    `daemon over its bursts: event-loop delay max ${worstLoop.loopMaxMs.toFixed(0)} ms (p99 ${worstLoop.loopP99Ms.toFixed(0)} ms in that round)`,
  );
  // On a small machine both paths are bound by CPU: the agents' start-up is the same work on both sides, so what the
  // daemon spends beside it is what the ratio shows (this process also runs the /healthz poller and the RPC client).
  for (let i = 0; i < rounds; i += 1)
    console.log(
      `CPU, round ${i + 1}: bare relay ${formatCpu((bareRuns[i] as Run).cpu)}; switchboard ${formatCpu((sbRuns[i] as Run).cpu)}`,
    );
} finally {
  agent.destroy();
  await daemon.stop();
  bare.close();
  dir.remove();
}

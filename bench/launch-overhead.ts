// Launch-to-first-event: a session launched through the SessionManager and the real harness (SDK or per-turn runner,
// store writes, log appends) until its first assistant text arrives, beside spawning the same fake agent executable
// directly and waiting for its first assistant line on stdout, in the same run.
// Run: npm run bench:launch   (or: npx node bench/launch-overhead.ts [iterations])
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/core/clock.ts';
import type { HarnessName } from '../src/core/config.ts';
import { loadConfig } from '../src/core/config-load.ts';
import { sessionManagerIn } from '../test/support/session-manager-in.ts';
import { tempDir } from '../test/support/temp-dir.ts';
import { percentile, printTable } from './stats.ts';

const iterations = Number(process.argv[2] ?? 30);
const fake = (name: string): string => fileURLToPath(new URL(`../test/support/fake-${name}.mjs`, import.meta.url));

/** Direct spawns: argv as each CLI is run for one turn; `isText` spots the first assistant line. */
const DIRECT: Record<HarnessName, { args: string[]; isText: (line: string) => boolean }> = {
  claude: {
    args: ['-p', 'hello', '--output-format', 'stream-json', '--verbose'],
    isText: (line) => line.includes('"type":"assistant"'),
  },
  codex: {
    args: ['exec', '--json', '--skip-git-repo-check', 'hello'],
    isText: (line) => line.includes('"agent_message"'),
  },
  gemini: {
    args: ['--prompt=hello', '--output-format', 'stream-json'],
    isText: (line) => line.includes('"role":"assistant"'),
  },
};

function direct(harness: HarnessName, cwd: string): Promise<number> {
  const { args, isText } = DIRECT[harness];
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fake(harness), ...args], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    let done = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (done || !isText(line)) return;
      done = true;
      resolve(performance.now() - start);
    });
    child.once('exit', () => (done ? undefined : reject(new Error(`${harness} fake exited without text`))));
  });
}

const dir = tempDir('sb-bench-launch-');
const workdir = join(dir.path, 'work');
mkdirSync(workdir);
const { config } = loadConfig({
  home: dir.path,
  env: {},
  overrides: {
    workspaces: [dir.path],
    maxSessions: 2,
    maxPersistedSessions: iterations * 4,
    'harnesses.claude.executable': fake('claude'),
    'harnesses.codex.executable': fake('codex'),
    'harnesses.gemini.executable': fake('gemini'),
  },
});
const clock = systemClock();
const { db, manager } = sessionManagerIn(dir.path, config, clock);

async function throughManager(harness: HarnessName): Promise<number> {
  const start = performance.now();
  const elapsed = new Promise<number>((resolve) => {
    const off = manager.on((signal) => {
      if (signal.type === 'output') {
        off();
        resolve(performance.now() - start);
      }
    });
  });
  const session = await manager.launch({ prompt: 'hello', harness, workdir, originChannel: 'bench', multiTurn: false });
  const ms = await elapsed;
  await new Promise<void>((resolve) => {
    const off = manager.on((signal) => {
      if (signal.type === 'ended' && signal.session.id === session.id) {
        off();
        resolve();
      }
    });
    if (!session.isActive) resolve();
  });
  return ms;
}

try {
  const rows: (string | number)[][] = [];
  for (const harness of ['claude', 'codex', 'gemini'] as const) {
    await direct(harness, workdir);
    await throughManager(harness); // warm up both paths
    const bare: number[] = [];
    const ours: number[] = [];
    for (let i = 0; i < iterations; i += 1) {
      bare.push(await direct(harness, workdir));
      ours.push(await throughManager(harness));
    }
    const p50 = percentile(ours, 50) - percentile(bare, 50);
    rows.push([`${harness}: spawn the fake directly`, percentile(bare, 50), percentile(bare, 99), '']);
    rows.push([`${harness}: launch through switchboard`, percentile(ours, 50), percentile(ours, 99), p50]);
  }
  console.log(`${iterations} launches per harness, sequential, time to the first assistant text (ms)`);
  printTable(['path', 'p50 ms', 'p99 ms', 'overhead p50 ms'], rows);
} finally {
  await manager.stop();
  db.close();
  dir.remove();
}

// Several real daemon processes as the nodes of one cluster on a test PostgreSQL: each node has its own home and config
// (`store.url`, `node.name`, labels, capacity, its workspaces, the fake Claude), started one after another (the first
// makes the schema and the shared tokens), SIGKILLed and started again by name.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { openPostgres } from '../../src/store/kysely/postgres.ts';
import type { Database } from '../../src/store/tables/index.ts';
import type { DaemonProcess } from './daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from './daemon-process.ts';
import type { TestPostgres } from './postgres.ts';
import { startPostgres } from './postgres.ts';
import { tempDir } from './temp-dir.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));

/** One node of the rig. */
export interface NodeSpec {
  name: string;
  labels?: string[];
  /** Default 5. */
  maxSessions?: number;
  /** The workspace roots it holds; default the rig's folder. */
  workspaces?: string[];
  /** More config for this node (merged over the rig's). */
  config?: Record<string, unknown>;
}

/** How the rig's nodes are configured. */
export interface RigOptions {
  /** `cluster.nodeTimeoutSec` of every node; default 3. */
  timeoutSec?: number;
  /** Config every node gets (merged over the rig's defaults). */
  config?: Record<string, unknown>;
  /** Environment of the fake agent (e.g. FAKE_AGENT_LOG). */
  agentEnv?: Record<string, string>;
}

/** A running cluster of daemon processes sharing one database. */
export interface ClusterRig {
  /** The rig's folder (homes, workspaces); removed by `stop`. */
  dir: { path: string; remove: () => void };
  pg: TestPostgres;
  /** The shared database, for assertions. */
  db: Kysely<Database>;
  /** The folder every node holds by default (its `workspaces`). */
  workspace: string;
  /** The running daemon of each node, by name (absent while killed). */
  nodes: Map<string, DaemonProcess>;
  /** Every daemon process started so far, by node name (killed ones too: their output, for diagnostics). */
  runs: { name: string; daemon: DaemonProcess }[];
  node(name: string): DaemonProcess;
  /** Names of the nodes running now. */
  up(): string[];
  /** Starts (or restarts) a node; resolves once it serves requests. */
  start(name: string): Promise<DaemonProcess>;
  /** SIGKILLs a node and waits for its exit. */
  kill(name: string): Promise<void>;
  /** Stops a node's process (SIGSTOP) for `ms`, then lets it go on (SIGCONT): a stall the others may take for a loss. */
  freeze(name: string, ms: number): Promise<void>;
  /** SIGKILLs every node, stops the database and removes the folder. */
  stop(): Promise<void>;
}

/** Starts a PostgreSQL and one daemon process per spec, one after another, in a new folder named with `prefix`. */
export async function startClusterRig(
  prefix: string,
  specs: readonly NodeSpec[],
  options: RigOptions = {},
): Promise<ClusterRig> {
  const dir = tempDir(prefix);
  const pg = await startPostgres();
  const db = openPostgres({ url: pg.url, maxConnections: 2 });
  const nodes = new Map<string, DaemonProcess>();
  const homes = new Map<string, string>();
  for (const spec of specs) {
    const home = join(dir.path, `home-${spec.name}`);
    mkdirSync(home, { recursive: true });
    const config = {
      store: { url: pg.url },
      node: { name: spec.name, labels: spec.labels ?? [] },
      cluster: { nodeTimeoutSec: options.timeoutSec ?? 3 },
      maxSessions: spec.maxSessions ?? 5,
      workspaces: spec.workspaces ?? [dir.path],
      log: { level: 'warn' },
      harnesses: { claude: { executable: FAKE_CLAUDE, env: options.agentEnv ?? {} } },
      ...options.config,
      ...spec.config,
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
    homes.set(spec.name, home);
  }
  const rig: ClusterRig = {
    dir,
    pg,
    db,
    workspace: dir.path,
    nodes,
    runs: [],
    node(name) {
      const node = nodes.get(name);
      if (!node) throw new Error(`node ${name} is not running`);
      return node;
    },
    up: () => [...nodes.keys()],
    async start(name) {
      const home = homes.get(name);
      if (!home) throw new Error(`no node named ${name}`);
      const node = await startDaemonProcess(home);
      nodes.set(name, node);
      rig.runs.push({ name, daemon: node });
      return node;
    },
    async kill(name) {
      await killDaemonProcess(nodes.get(name));
      nodes.delete(name);
    },
    async freeze(name, ms) {
      const child = rig.node(name).child;
      child.kill('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, ms));
      child.kill('SIGCONT');
    },
    async stop() {
      for (const name of [...nodes.keys()]) await rig.kill(name);
      await db.destroy();
      await pg.stop();
      dir.remove();
    },
  };
  try {
    for (const spec of specs) await rig.start(spec.name);
  } catch (error) {
    await rig.stop();
    throw error;
  }
  return rig;
}

// A cluster of real daemon processes on one test PostgreSQL, for the multi-node end-to-end tests: one home per node
// (its config: the shared store, the node's name, labels and capacity, the fake Claude), started one after another.
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

/** One node of a test cluster: its name, labels, `maxSessions` and the workspaces it holds (default: the rig's root). */
export interface RigNode {
  name: string;
  labels?: string[];
  maxSessions: number;
  workspaces?: string[];
  /** Config keys merged over the node's config. */
  extra?: Record<string, unknown>;
}

/** A running test cluster. */
export interface ClusterRig {
  dir: { path: string; remove: () => void };
  pg: TestPostgres;
  /** The shared database, for assertions. */
  db: Kysely<Database>;
  /** The running daemon of each node, by name. */
  nodes: Map<string, DaemonProcess>;
  node(name: string): DaemonProcess;
  /** Starts (again) the node of this name. */
  start(name: string): Promise<DaemonProcess>;
  /** SIGKILLs the node of this name. */
  kill(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts PostgreSQL and the nodes (one after another: the first makes the schema and the shared tokens). */
export async function startClusterRig(prefix: string, specs: RigNode[], timeoutSec = 3): Promise<ClusterRig> {
  const dir = tempDir(prefix);
  const pg = await startPostgres();
  const db = openPostgres({ url: pg.url, maxConnections: 2 });
  const nodes = new Map<string, DaemonProcess>();
  for (const spec of specs) {
    const home = join(dir.path, spec.name);
    mkdirSync(home, { recursive: true });
    const config = {
      store: { url: pg.url },
      node: { name: spec.name, labels: spec.labels ?? [] },
      cluster: { nodeTimeoutSec: timeoutSec },
      maxSessions: spec.maxSessions,
      workspaces: spec.workspaces ?? [dir.path],
      harnesses: { claude: { executable: FAKE_CLAUDE } },
      log: { level: 'warn' },
      ...spec.extra,
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
  }
  const rig: ClusterRig = {
    dir,
    pg,
    db,
    nodes,
    node(name) {
      const node = nodes.get(name);
      if (!node) throw new Error(`no running node ${name}`);
      return node;
    },
    async start(name) {
      const node = await startDaemonProcess(join(dir.path, name));
      nodes.set(name, node);
      return node;
    },
    async kill(name) {
      await killDaemonProcess(nodes.get(name));
      nodes.delete(name);
    },
    async stop() {
      for (const node of nodes.values()) await killDaemonProcess(node);
      await db.destroy();
      await pg.stop();
      dir.remove();
    },
  };
  for (const spec of specs) await rig.start(spec.name);
  return rig;
}

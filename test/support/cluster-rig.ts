// Several real daemon processes as the nodes of one cluster on a test PostgreSQL: each node has its own home and config
// (`store.url`, `node.name`, labels, capacity, the fake Claude), started, SIGKILLed and started again by name.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DaemonProcess } from './daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from './daemon-process.ts';
import type { TestPostgres } from './postgres.ts';
import { startPostgres } from './postgres.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));

/** One node of the rig. */
export interface NodeSpec {
  name: string;
  labels?: string[];
  maxSessions?: number;
  /** More config for this node (merged over the rig's). */
  config?: Record<string, unknown>;
}

/** A running cluster of daemon processes sharing one database. */
export interface ClusterRig {
  pg: TestPostgres;
  /** Folder every node's workspace is in (each node's `workspaces`). */
  workspace: string;
  /** The running process of each node (absent while killed). */
  node(name: string): DaemonProcess;
  /** Names of the nodes running now. */
  up(): string[];
  /** Starts (or restarts) a node; resolves once it serves requests. */
  start(name: string): Promise<DaemonProcess>;
  /** SIGKILLs a node and waits for its exit. */
  kill(name: string): Promise<void>;
  /** SIGKILLs every node and stops the database. */
  stop(): Promise<void>;
}

/**
 * Starts a PostgreSQL and one daemon process per spec (one after another), all with `cluster.nodeTimeoutSec`
 * `timeoutSec` and the fake Claude as the claude harness (with `agentEnv` in its environment). `dir` holds the homes and the shared workspace.
 */
export async function startClusterRig(
  dir: string,
  specs: readonly NodeSpec[],
  options: { timeoutSec?: number; config?: Record<string, unknown>; agentEnv?: Record<string, string> } = {},
): Promise<ClusterRig> {
  const pg = await startPostgres();
  const workspace = join(dir, 'work');
  mkdirSync(workspace, { recursive: true });
  const running = new Map<string, DaemonProcess>();
  const homes = new Map<string, string>();
  for (const spec of specs) {
    const home = join(dir, `home-${spec.name}`);
    mkdirSync(home, { recursive: true });
    const config = {
      store: { url: pg.url },
      node: { name: spec.name, labels: spec.labels ?? [] },
      cluster: { nodeTimeoutSec: options.timeoutSec ?? 3 },
      maxSessions: spec.maxSessions ?? 5,
      workspaces: [workspace],
      log: { level: 'warn' },
      harnesses: { claude: { executable: FAKE_CLAUDE, env: options.agentEnv ?? {} } },
      ...options.config,
      ...spec.config,
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
    homes.set(spec.name, home);
  }
  const rig: ClusterRig = {
    pg,
    workspace,
    node(name) {
      const process = running.get(name);
      if (!process) throw new Error(`node ${name} is not running`);
      return process;
    },
    up: () => [...running.keys()],
    async start(name) {
      const home = homes.get(name);
      if (!home) throw new Error(`no node named ${name}`);
      const process = await startDaemonProcess(home);
      running.set(name, process);
      return process;
    },
    async kill(name) {
      await killDaemonProcess(running.get(name));
      running.delete(name);
    },
    async stop() {
      for (const name of [...running.keys()]) await rig.kill(name);
      await pg.stop();
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

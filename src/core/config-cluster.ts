import { hostname } from 'node:os';
import { z } from 'zod';

/** Where the state lives: the embedded SQLite file (default) or one PostgreSQL database every node shares. */
export const storeSchema = z.strictObject({
  /**
   * `postgres://…` (or `postgresql://…`) makes this daemon a node of the cluster sharing that database; absent, the
   * daemon keeps its state in `<home>/state.db` (SQLite) and is a cluster of one.
   */
  url: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// connection string')
    .optional(),
  /** Connections of the PostgreSQL pool. */
  maxConnections: z.number().int().positive().default(10),
});

const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Defaults a node name to the host name, cut to what a node name may hold. */
function defaultNodeName(): string {
  const name = hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 63);
  return NODE_NAME.test(name) ? name : 'node';
}

/** This daemon as a node of the cluster. */
export const nodeSchema = z.strictObject({
  /** Unique in the cluster; default the host name. */
  name: z.string().regex(NODE_NAME, 'letters, digits, . _ - (at most 63)').default(defaultNodeName),
  /** Free-form labels a launch can ask for (`--label gpu`). */
  labels: z.array(z.string().regex(/^[A-Za-z0-9._:-]{1,63}$/, 'letters, digits, . _ : - (at most 63)')).default([]),
  /** URL other nodes and people reach this node's gateway at (shown by `nodes`); default its listening address. */
  url: z.url().optional(),
});

/** How nodes watch each other. */
export const clusterSchema = z.strictObject({
  /** A node whose heartbeat is older than this is `down`: its sessions are interrupted and its work taken over. */
  nodeTimeoutSec: z.number().positive().default(15),
  /** How often a node writes its heartbeat and checks the others; default a fifth of `nodeTimeoutSec`. */
  heartbeatSec: z.number().positive().optional(),
});

export type StoreConfig = z.infer<typeof storeSchema>;
export type NodeConfig = z.infer<typeof nodeSchema>;
export type ClusterConfig = z.infer<typeof clusterSchema>;

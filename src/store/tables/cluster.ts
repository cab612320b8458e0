import type { Generated } from 'kysely';

/**
 * Cluster tables (migrations 800–899): the nodes sharing this database with their heartbeats, the leases that keep a
 * singleton (a poller, the cron clock) on one node at a time, and the secrets every node shares (the gateway token).
 * On SQLite they hold the one node of a cluster of one.
 */
export interface ClusterTables {
  cluster_nodes: {
    name: string;
    /** A fresh id per daemon start: tells this run of a node from an earlier one (and from an impostor). */
    incarnation: string;
    /** JSON array of the node's labels. */
    labels: string;
    /** JSON array of the harnesses this node can run. */
    harnesses: string;
    /** JSON array of the workspace roots this node holds. */
    workspaces: string;
    max_sessions: number;
    url: string | null;
    status: 'up' | 'down';
    started_at: number;
    heartbeat_at: number;
    down_at: number | null;
    /** When the others finished taking over what it left (null while that is owed). */
    taken_over_at: number | null;
  };
  cluster_leases: {
    name: string;
    holder: string;
    incarnation: string;
    expires_at: number;
    acquired_at: number;
  };
  cluster_secrets: {
    name: string;
    value: string;
    created_at: number;
  };
  /** A request for a session on another node (send, kill, resume, an approval's decision), run once by that node. */
  cluster_commands: {
    id: string;
    /** The node that runs it. */
    target: string;
    kind: string;
    /** JSON of the command's parameters. */
    payload: string;
    /** `queued` → `running` (claimed by the target) → `done` | `failed`. */
    status: 'queued' | 'running' | 'done' | 'failed';
    /** JSON of the answer, once done. */
    result: string | null;
    /** Why it failed (a message), once failed. */
    error: string | null;
    created_at: number;
    claimed_at: number | null;
    /** The incarnation of the node that claimed it. */
    claimed_by: string | null;
    finished_at: number | null;
  };
  /**
   * Every record of the coding sessions' and the engine's JSONL logs, written through on PostgreSQL (so any node reads
   * a session's output and a new engine holder rebuilds its logs); unused on SQLite.
   */
  log_records: {
    kind: 'session' | 'engine';
    /** The log's id: the coding session's or the engine session's. */
    log: string;
    seq: number;
    ts: number;
    /** The record as its JSONL line holds it. */
    record: string;
  };
  /**
   * Calls of the engine made on a node that does not serve it (PostgreSQL): the engine's holder runs each and writes
   * its outcome; the caller waits for it (see engine/routed-engine.ts).
   */
  engine_calls: {
    id: Generated<number>;
    /** The EngineApi method: `acceptUserMessage`, `postSystemMessage`, … */
    method: string;
    /** JSON array of the arguments. */
    args: string;
    status: 'pending' | 'running' | 'done' | 'failed';
    /** The incarnation of the node running it. */
    claimed_by: string | null;
    /** JSON of the result (done). */
    result: string | null;
    /** JSON `{kind, message, field?}` of the error (failed). */
    error: string | null;
    created_at: number;
    done_at: number | null;
  };
}

import type { Kysely, Selectable } from 'kysely';
import type { HarnessName } from '../core/config.ts';
import type { Database } from './tables/index.ts';

/** A node of the cluster as the database knows it. */
export interface NodeRecord {
  name: string;
  incarnation: string;
  labels: string[];
  harnesses: HarnessName[];
  workspaces: string[];
  maxSessions: number;
  url: string | null;
  status: 'up' | 'down';
  startedAt: number;
  heartbeatAt: number;
  downAt: number | null;
  takenOverAt: number | null;
}

/** What a node says about itself when it joins. */
export type NodeJoin = Omit<NodeRecord, 'status' | 'heartbeatAt' | 'downAt' | 'takenOverAt'>;

function toRecord(row: Selectable<Database['cluster_nodes']>): NodeRecord {
  return {
    name: row.name,
    incarnation: row.incarnation,
    labels: JSON.parse(row.labels) as string[],
    harnesses: JSON.parse(row.harnesses) as HarnessName[],
    workspaces: JSON.parse(row.workspaces) as string[],
    maxSessions: row.max_sessions,
    url: row.url,
    status: row.status,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    downAt: row.down_at,
    takenOverAt: row.taken_over_at,
  };
}

/** The `cluster_nodes` table: who is in the cluster, what each can run, and when each was last heard from. */
export class ClusterNodeStore {
  readonly #db: Kysely<Database>;
  /** The incarnation each node name last joined under through this store (this process's runs). */
  readonly #joined = new Map<string, string>();

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * The incarnation `name` last joined under through this store (this process's current run of that node), or null
   * before it joined: what this node's own claims are fenced with (see Claimant.incarnation).
   */
  joinedAs(name: string): string | null {
    return this.#joined.get(name) ?? null;
  }

  /** Records (or re-records, with a new incarnation) a node as up, heard from at `now`. */
  async join(node: NodeJoin, now: number): Promise<void> {
    const values = {
      name: node.name,
      incarnation: node.incarnation,
      labels: JSON.stringify(node.labels),
      harnesses: JSON.stringify(node.harnesses),
      workspaces: JSON.stringify(node.workspaces),
      max_sessions: node.maxSessions,
      url: node.url,
      status: 'up' as const,
      started_at: node.startedAt,
      heartbeat_at: now,
      down_at: null,
      taken_over_at: null,
    };
    await this.#db
      .insertInto('cluster_nodes')
      .values(values)
      .onConflict((oc) => oc.column('name').doUpdateSet(values))
      .execute();
    this.#joined.set(node.name, node.incarnation);
  }

  /**
   * Writes this incarnation's heartbeat. False when the row is no longer ours (another process took the name) or the
   * others declared us down: the caller must stop acting as that node.
   */
  async beat(name: string, incarnation: string, now: number): Promise<boolean> {
    const rows = await this.#db
      .updateTable('cluster_nodes')
      .set({ heartbeat_at: now })
      .where('name', '=', name)
      .where('incarnation', '=', incarnation)
      .where('status', '=', 'up')
      .returning('name')
      .execute();
    return rows.length > 0;
  }

  /**
   * Marks `down` every node (other than `except`) not heard from since `staleBefore`, one compare-and-swap per node, and
   * returns the ones this call marked: exactly one caller in the cluster wins each.
   */
  async markStale(staleBefore: number, now: number, except: string): Promise<NodeRecord[]> {
    const rows = await this.#db
      .updateTable('cluster_nodes')
      .set({ status: 'down', down_at: now })
      .where('status', '=', 'up')
      .where('heartbeat_at', '<', staleBefore)
      .where('name', '!=', except)
      .returningAll()
      .execute();
    return rows.map(toRecord);
  }

  /**
   * Down nodes whose takeover is still owed: the ones just marked, and the ones whose taker died before finishing
   * (marked down before `orphanedBefore`). Taking over is idempotent, so two takers at once do no harm.
   */
  async owedTakeovers(orphanedBefore: number): Promise<NodeRecord[]> {
    const rows = await this.#db
      .selectFrom('cluster_nodes')
      .selectAll()
      .where('status', '=', 'down')
      .where('taken_over_at', 'is', null)
      .where('down_at', '<', orphanedBefore)
      .orderBy('name')
      .execute();
    return rows.map(toRecord);
  }

  /** Records that a down node's takeover finished (only if it is still the same incarnation, still down). */
  async tookOver(name: string, incarnation: string, now: number): Promise<void> {
    await this.#db
      .updateTable('cluster_nodes')
      .set({ taken_over_at: now })
      .where('name', '=', name)
      .where('incarnation', '=', incarnation)
      .where('status', '=', 'down')
      .execute();
  }

  /** Marks one node down (its own clean stop); true when it was up. */
  async leave(name: string, incarnation: string, now: number): Promise<boolean> {
    const rows = await this.#db
      .updateTable('cluster_nodes')
      .set({ status: 'down', down_at: now, taken_over_at: now })
      .where('name', '=', name)
      .where('incarnation', '=', incarnation)
      .where('status', '=', 'up')
      .returning('name')
      .execute();
    return rows.length > 0;
  }

  /** One node, or null. */
  async get(name: string): Promise<NodeRecord | null> {
    const row = await this.#db.selectFrom('cluster_nodes').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every node the cluster has seen, by name. */
  async list(): Promise<NodeRecord[]> {
    const rows = await this.#db.selectFrom('cluster_nodes').selectAll().orderBy('name').execute();
    return rows.map(toRecord);
  }
}

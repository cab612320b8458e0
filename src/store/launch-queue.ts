// The cluster's durable launch queue (PostgreSQL): launches stored as `queued` coding sessions, claimed oldest first by
// a node that can run them with `FOR UPDATE SKIP LOCKED` (two nodes never take the same one, and neither waits for the
// other), in the transaction that makes the session `starting` on that node and opens its first run.
import type { Expression, Kysely, SqlBool, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { HarnessName } from '../core/config.ts';
import { sessionFromRow } from './coding-session-rows.ts';
import type { StoredSession } from './coding-session-types.ts';
import type { Database } from './tables/index.ts';

/** The channel every node LISTENs on: a launch was queued (sent on commit of the insert). */
export const LAUNCH_CHANNEL = 'switchboard_launch';

/** What a node can run: its name, labels, harnesses and workspace roots (absolute, resolved). */
export interface NodeAbility {
  name: string;
  labels: readonly string[];
  harnesses: readonly HarnessName[];
  workspaces: readonly string[];
}

/** A launch a node claimed: the session (now `starting` on it) and its first run's id. */
export interface ClaimedLaunch {
  record: StoredSession;
  runId: number;
}

/** A root without its trailing slash (`/` stays `/`). */
function trimmed(root: string): string {
  return root.length > 1 ? root.replace(/\/+$/, '') : root;
}

/** The queue of launches waiting for a node with a free slot. */
export class LaunchQueueStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Sends the queue's NOTIFY inside `trx`: the nodes hear of the launch once it commits. */
  async notify(trx: Transaction<Database>): Promise<void> {
    await sql`SELECT pg_notify(${LAUNCH_CHANNEL}, '')`.execute(trx);
  }

  /**
   * Claims the oldest queued launch `node` can run (harness, `on`, labels, a workspace holding its workdir), skipping
   * rows another node is claiming; it becomes `starting` on `node` (its start time now) with its first run opened, in
   * one transaction. Null when there is none.
   */
  async claimNext(node: NodeAbility, now: number): Promise<ClaimedLaunch | null> {
    if (node.harnesses.length === 0 || node.workspaces.length === 0) return null;
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('coding_sessions')
        .selectAll()
        .where('status', '=', 'queued')
        .where('harness', 'in', [...node.harnesses])
        .where((eb) => eb.or([eb('place_on', 'is', null), eb('place_on', '=', node.name)]))
        .where((eb) =>
          eb.or([
            eb('place_labels', 'is', null),
            sql<SqlBool>`${eb.ref('place_labels')}::jsonb <@ ${JSON.stringify(node.labels)}::jsonb`,
          ]),
        )
        .where((eb) => eb.or(node.workspaces.map((root) => this.#holds(trimmed(root)))))
        .orderBy('queue_seq')
        .orderBy('id')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!row) return null;
      await trx
        .updateTable('coding_sessions')
        .set({ status: 'starting', node: node.name, started_at: now, updated_at: now })
        .where('id', '=', row.id)
        .execute();
      const run = await trx
        .insertInto('session_runs')
        .values({
          session_id: row.id,
          name: row.name,
          prompt: row.prompt,
          harness: row.harness,
          kind: 'launch',
          status: 'running',
          started_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const record = sessionFromRow({ ...row, status: 'starting', node: node.name, started_at: now, updated_at: now });
      return { record, runId: run.id };
    });
  }

  /** `workdir` is `root` or lies under it (a prefix test on the path, portable: substr on both databases). */
  #holds(root: string): Expression<SqlBool> {
    if (root === '/') return sql<SqlBool>`substr(workdir, 1, 1) = '/'`;
    const prefix = `${root}/`;
    return sql<SqlBool>`(workdir = ${root} OR substr(workdir, 1, ${prefix.length}) = ${prefix})`;
  }

  /** Where a queued session stands: 1 for the oldest queued launch. Null when it is not queued. */
  async position(id: string): Promise<number | null> {
    const self = await this.#db
      .selectFrom('coding_sessions')
      .select(['queue_seq', 'status'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!self || self.status !== 'queued' || self.queue_seq === null) return null;
    const ahead = await this.#db
      .selectFrom('coding_sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'queued')
      .where('queue_seq', '<', self.queue_seq)
      .executeTakeFirstOrThrow();
    return Number(ahead.n) + 1;
  }
}

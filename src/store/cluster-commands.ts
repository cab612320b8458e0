// The durable command queue for sessions on other nodes (`cluster_commands`): a node that is asked to steer a session
// another node runs (send, kill, resume, an approval's decision) stores a command for that node; the target claims it
// (`FOR UPDATE SKIP LOCKED` on PostgreSQL), runs it once and stores the answer; the caller waits for it. NOTIFY (sent
// on commit) wakes the target and the caller. A command is run at most once: one claimed by a process that died is
// failed, never claimed again.
import type { Kysely, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { ErrorKind } from '../core/errors.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';

/** The channel a command's target LISTENs on (payload: the target's node name). */
export const COMMAND_CHANNEL = 'switchboard_command';
/** The channel callers LISTEN on (payload: the id of the command that finished). */
export const COMMAND_DONE_CHANNEL = 'switchboard_command_done';

/** Where a command is: waiting, being run by its target, or finished. */
export type CommandStatus = 'queued' | 'running' | 'done' | 'failed';

/** Why a command failed, as the caller rethrows it. */
export interface CommandError {
  kind: ErrorKind;
  message: string;
}

/** One command for a node. */
export interface ClusterCommand {
  id: string;
  target: string;
  kind: string;
  payload: unknown;
  status: CommandStatus;
  result: unknown;
  error: CommandError | null;
  createdAt: number;
  claimedAt: number | null;
  claimedBy: string | null;
  finishedAt: number | null;
}

/** How a command ended: its answer, or why it failed. */
export type CommandOutcome = { ok: true; result: unknown } | { ok: false; error: CommandError };

function commandOf(row: Selectable<Database['cluster_commands']>): ClusterCommand {
  return {
    id: row.id,
    target: row.target,
    kind: row.kind,
    payload: JSON.parse(row.payload) as unknown,
    status: row.status,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    error: row.error === null ? null : (JSON.parse(row.error) as CommandError),
    createdAt: row.created_at,
    claimedAt: row.claimed_at,
    claimedBy: row.claimed_by,
    finishedAt: row.finished_at,
  };
}

/** The `cluster_commands` table. */
export class ClusterCommandStore {
  readonly #db: Kysely<Database>;
  readonly #shared: boolean;

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#shared = isShared(db);
  }

  /** Stores a command for `target`, which hears of it (NOTIFY) once it commits. */
  async submit(command: { id: string; target: string; kind: string; payload: unknown }, now: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .insertInto('cluster_commands')
        .values({
          id: command.id,
          target: command.target,
          kind: command.kind,
          payload: JSON.stringify(command.payload ?? null),
          status: 'queued',
          created_at: now,
        })
        .execute();
      if (this.#shared) await sql`SELECT pg_notify(${COMMAND_CHANNEL}, ${command.target})`.execute(trx);
    });
  }

  /**
   * Claims the oldest queued command for `target` (skipping one another claimer holds): it becomes `running`, claimed
   * by `incarnation`. Null when none is queued.
   */
  async claimNext(target: string, incarnation: string, now: number): Promise<ClusterCommand | null> {
    return this.#db.transaction().execute(async (trx) => {
      const pick = trx
        .selectFrom('cluster_commands')
        .selectAll()
        .where('target', '=', target)
        .where('status', '=', 'queued')
        .orderBy('created_at')
        .orderBy('id')
        .limit(1);
      const row = await (this.#shared ? pick.forUpdate().skipLocked() : pick).executeTakeFirst();
      if (!row) return null;
      const claimed = await trx
        .updateTable('cluster_commands')
        .set({ status: 'running', claimed_at: now, claimed_by: incarnation })
        .where('id', '=', row.id)
        .where('status', '=', 'queued')
        .returningAll()
        .executeTakeFirst();
      return claimed ? commandOf(claimed) : null;
    });
  }

  /** Stores how a command this incarnation runs ended (only while it is still its to finish); true when stored. */
  async finish(id: string, incarnation: string, outcome: CommandOutcome, now: number): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('cluster_commands')
        .set({
          status: outcome.ok ? 'done' : 'failed',
          result: outcome.ok ? JSON.stringify(outcome.result ?? null) : null,
          error: outcome.ok ? null : JSON.stringify(outcome.error),
          finished_at: now,
        })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .where('claimed_by', '=', incarnation)
        .returning('id')
        .executeTakeFirst();
      if (done && this.#shared) await sql`SELECT pg_notify(${COMMAND_DONE_CHANNEL}, ${id})`.execute(trx);
      return done !== undefined;
    });
  }

  /** Fails a command nobody claimed yet (its caller stopped waiting); true when it was still queued. */
  async abandon(id: string, error: CommandError, now: number): Promise<boolean> {
    const row = await this.#db
      .updateTable('cluster_commands')
      .set({ status: 'failed', error: JSON.stringify(error), finished_at: now })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Fails every unfinished command of `target` (its node was lost: queued ones would run late, running ones died with
   * it), or with `exceptIncarnation` only the running ones another incarnation claimed (this node restarted). The
   * callers hear of each (NOTIFY). Resolves with the ids failed.
   */
  async failTarget(
    target: string,
    error: CommandError,
    now: number,
    options: { exceptIncarnation?: string } = {},
  ): Promise<string[]> {
    const { exceptIncarnation } = options;
    return this.#db.transaction().execute(async (trx) => {
      let query = trx
        .updateTable('cluster_commands')
        .set({ status: 'failed', error: JSON.stringify(error), finished_at: now })
        .where('target', '=', target);
      query =
        exceptIncarnation === undefined
          ? query.where('status', 'in', ['queued', 'running'])
          : query.where('status', '=', 'running').where('claimed_by', '!=', exceptIncarnation);
      const rows = await query.returning('id').execute();
      if (this.#shared)
        for (const { id } of rows) await sql`SELECT pg_notify(${COMMAND_DONE_CHANNEL}, ${id})`.execute(trx);
      return rows.map((r) => r.id);
    });
  }

  /** Deletes finished commands older than `before` (their callers have long had their answer); resolves with how many. */
  async prune(before: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('cluster_commands')
      .where('status', 'in', ['done', 'failed'])
      .where('finished_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** One command, or null. */
  async get(id: string): Promise<ClusterCommand | null> {
    const row = await this.#db.selectFrom('cluster_commands').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? commandOf(row) : null;
  }
}

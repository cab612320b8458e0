// What GitHub reviews, review comments and mentions set off (`github_reworks`): one row per review, comment or mention
// id, inserted once (a redelivery finds it), with the session that does the work and the comment that answered.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './tables/index.ts';

type Row = Database['github_reworks'];

/** A rework or mention as stored. */
export interface GithubRework {
  key: string;
  kind: Row['kind'];
  repo: string;
  number: number;
  sessionId: string | null;
  prompt: string;
  state: Row['state'];
  answerId: number | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

function toRecord(row: Row): GithubRework {
  return {
    key: row.key,
    kind: row.kind,
    repo: row.repo,
    number: Number(row.number),
    sessionId: row.session_id,
    prompt: row.prompt,
    state: row.state,
    answerId: row.answer_id === null ? null : Number(row.answer_id),
    error: row.error,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The `github_reworks` table. Every method is one statement, resolved after its commit. */
export class GithubReworkStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The row of `key`, if any. */
  async get(key: string): Promise<GithubRework | undefined> {
    const row = await this.#db.selectFrom('github_reworks').selectAll().where('key', '=', key).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /**
   * Inserts `key` as `queued` unless it is there; resolves the stored row and whether this call inserted it (false:
   * a redelivery, or a retry after a crash).
   */
  async claim(input: {
    key: string;
    kind: Row['kind'];
    repo: string;
    number: number;
    sessionId: string | null;
    prompt: string;
    now: number;
  }): Promise<{ record: GithubRework; inserted: boolean }> {
    const result = await this.#db
      .insertInto('github_reworks')
      .values({
        key: input.key,
        kind: input.kind,
        repo: input.repo,
        number: input.number,
        session_id: input.sessionId,
        prompt: input.prompt,
        state: 'queued',
        answer_id: null,
        error: null,
        created_at: input.now,
        updated_at: input.now,
      })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    const record = await this.get(input.key);
    if (!record) throw new Error(`github_reworks: ${input.key} vanished`);
    return { record, inserted: Number(result.numInsertedOrUpdatedRows ?? 0) > 0 };
  }

  /** Moves `key` to `state` (with its session, answer or error when given); `db` may be a transaction. */
  async set(
    key: string,
    patch: { state: Row['state']; sessionId?: string; answerId?: number; error?: string },
    now: number,
    db: Kysely<Database> | Transaction<Database> = this.#db,
  ): Promise<void> {
    await db
      .updateTable('github_reworks')
      .set({
        state: patch.state,
        updated_at: now,
        ...(patch.sessionId !== undefined ? { session_id: patch.sessionId } : {}),
        ...(patch.answerId !== undefined ? { answer_id: patch.answerId } : {}),
        ...(patch.error !== undefined ? { error: patch.error } : {}),
      })
      .where('key', '=', key)
      .execute();
  }

  /** Moves `key` from `from` to the patch's state (and error); resolves false when it was not in `from`. */
  async advance(
    key: string,
    from: Row['state'],
    patch: { state: Row['state']; error?: string },
    now: number,
  ): Promise<boolean> {
    const result = await this.#db
      .updateTable('github_reworks')
      .set({ state: patch.state, updated_at: now, ...(patch.error !== undefined ? { error: patch.error } : {}) })
      .where('key', '=', key)
      .where('state', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The rows in one of `states` (oldest first): what a restart resumes. */
  async inStates(states: readonly Row['state'][]): Promise<GithubRework[]> {
    const rows = await this.#db
      .selectFrom('github_reworks')
      .selectAll()
      .where('state', 'in', [...states])
      .orderBy('created_at')
      .execute();
    return rows.map(toRecord);
  }

  /** The rows of a session in one of `states` (oldest first). */
  async ofSession(sessionId: string, states: readonly Row['state'][]): Promise<GithubRework[]> {
    const rows = await this.#db
      .selectFrom('github_reworks')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('state', 'in', [...states])
      .orderBy('created_at')
      .execute();
    return rows.map(toRecord);
  }
}

// The pull request each session opened: recorded `pending` (with its branch, and whether switchboard created it)
// before the branch is made, and `opened` (number, url) once GitHub has it. A repeat of `session_pr` reads it back.
import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/** A session's pull request as stored. `number`/`url` are set once `state` is `opened`. */
export interface SessionPullRequest {
  sessionId: string;
  repo: string;
  branch: string;
  base: string;
  /** switchboard created the branch (so it may force-push it). */
  branchCreated: boolean;
  state: 'pending' | 'opened';
  number: number | null;
  url: string | null;
  createdAt: number;
  updatedAt: number;
}

type Row = Database['session_pull_requests'];

function toRecord(row: Row): SessionPullRequest {
  return {
    sessionId: row.session_id,
    repo: row.repo,
    branch: row.branch,
    base: row.base,
    branchCreated: Number(row.branch_created) === 1,
    state: row.state,
    number: row.number === null ? null : Number(row.number),
    url: row.url,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The `session_pull_requests` table. Every method is one statement, resolved after its commit. */
export class SessionPullRequestStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The record of a session, if any. */
  async get(sessionId: string): Promise<SessionPullRequest | undefined> {
    const row = await this.#db
      .selectFrom('session_pull_requests')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /** The opened pull request `number` of `repo` (`owner/name`, any case), if a session opened it. */
  async findByPull(repo: string, number: number): Promise<SessionPullRequest | undefined> {
    const rows = await this.#db
      .selectFrom('session_pull_requests')
      .selectAll()
      .where('number', '=', number)
      .where('state', '=', 'opened')
      .execute();
    const row = rows.find((r) => r.repo.toLowerCase() === repo.toLowerCase());
    return row ? toRecord(row) : undefined;
  }

  /**
   * Records the branch a session's PR will come from, before the branch is made or pushed. Keeps a record that is
   * there already (a repeat after a crash uses the first branch); resolves the stored record.
   */
  async begin(input: {
    sessionId: string;
    repo: string;
    branch: string;
    base: string;
    branchCreated: boolean;
    now: number;
  }): Promise<SessionPullRequest> {
    await this.#db
      .insertInto('session_pull_requests')
      .values({
        session_id: input.sessionId,
        repo: input.repo,
        branch: input.branch,
        base: input.base,
        branch_created: input.branchCreated ? 1 : 0,
        state: 'pending',
        number: null,
        url: null,
        created_at: input.now,
        updated_at: input.now,
      })
      .onConflict((oc) => oc.column('session_id').doNothing())
      .execute();
    const stored = await this.get(input.sessionId);
    if (!stored) throw new Error(`session_pull_requests: ${input.sessionId} vanished`);
    return stored;
  }

  /** Marks the session's PR opened (idempotent: the same number again changes nothing that matters). */
  async opened(sessionId: string, pr: { number: number; url: string }, now: number): Promise<void> {
    await this.#db
      .updateTable('session_pull_requests')
      .set({ state: 'opened', number: pr.number, url: pr.url, updated_at: now })
      .where('session_id', '=', sessionId)
      .execute();
  }
}

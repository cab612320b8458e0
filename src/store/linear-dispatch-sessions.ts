// The coding sessions that work for a dispatch (`linear_dispatch_sessions`): which session runs which phase and try,
// why the pipeline ended one, and the one caller that handles its end.
import type { Kysely } from 'kysely';
import { sessionOf } from './linear-dispatch-rows.ts';
import type { DispatchSession, SessionEndCause } from './linear-dispatch-types.ts';
import type { Database } from './tables/index.ts';

/** The map of coding sessions to dispatch phases. */
export class DispatchSessionStore {
  readonly #db: Kysely<Database>;

  /** Runs its statements on `db`. */
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Maps a coding session to a dispatch phase. */
  async addSession(session: Omit<DispatchSession, 'seq' | 'endCause' | 'endedAt'>): Promise<DispatchSession> {
    const row = await this.#db
      .insertInto('linear_dispatch_sessions')
      .values({
        session_id: session.sessionId,
        dispatch_id: session.dispatchId,
        phase: session.phase,
        attempt: session.attempt,
        try: session.try,
        started_at: session.startedAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return sessionOf(row);
  }

  /** The dispatch phase a coding session works for, if it is one of the pipeline's. */
  async session(sessionId: string): Promise<DispatchSession | null> {
    const row = await this.#db
      .selectFrom('linear_dispatch_sessions')
      .selectAll()
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    return row ? sessionOf(row) : null;
  }

  /** The newest session of a dispatch (the one its current phase runs in), if any. */
  async currentSession(dispatchId: string): Promise<DispatchSession | null> {
    const row = await this.#db
      .selectFrom('linear_dispatch_sessions')
      .selectAll()
      .where('dispatch_id', '=', dispatchId)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? sessionOf(row) : null;
  }

  /** Every session of a dispatch, oldest first. */
  async sessions(dispatchId: string): Promise<DispatchSession[]> {
    const rows = await this.#db
      .selectFrom('linear_dispatch_sessions')
      .selectAll()
      .where('dispatch_id', '=', dispatchId)
      .orderBy('seq')
      .execute();
    return rows.map(sessionOf);
  }

  /** Records why the pipeline is ending a session, before it kills it; the first cause wins. Returns whether set. */
  async setEndCause(sessionId: string, cause: SessionEndCause): Promise<boolean> {
    const result = await this.#db
      .updateTable('linear_dispatch_sessions')
      .set({ end_cause: cause })
      .where('session_id', '=', sessionId)
      .where('end_cause', 'is', null)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /** Marks a session's end as handled; true only for the one caller that marks it first. */
  async closeSession(sessionId: string, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('linear_dispatch_sessions')
      .set({ ended_at: now })
      .where('session_id', '=', sessionId)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }
}

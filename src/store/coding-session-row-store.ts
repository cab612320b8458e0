// The rows of coding sessions and their three lookup keys (id, name, backend id, in session_keys): inserted with their
// keys in one transaction, patched with each session's writes committed in the order asked for, read by id, by any
// key or all at once, and deleted when evicted. Every write first tells the listing pages (`changed`).
import type { Kysely, Transaction } from 'kysely';
import type { InsertableSessionRow } from './coding-session-rows.ts';
import { patchColumns, sessionFromRow, sessionRowValues } from './coding-session-rows.ts';
import type { Placement, SessionPatch, SessionStatus, StoredSession } from './coding-session-types.ts';
import { HotStatements } from './hot-statements.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';
import { WriteOrder } from './write-order.ts';

/** LIMIT for "all rows after OFFSET" (SQLite needs a LIMIT with an OFFSET; PostgreSQL takes this bigint as well). */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** Inserts the new session's row and lookup keys inside the caller's transaction; `placement` for a queued launch. */
export type InsertRow = (placement?: Placement) => Promise<void>;

/** Persistence of the rows of coding sessions and their lookup keys. */
export class SessionRowStore {
  readonly #db: Kysely<Database>;
  /** The hot-path statements of session rows (an insert per launch, a few update shapes per session), compiled once. */
  readonly #hot = new HotStatements();
  /** Called before each write to a session's row (the listing pages drop what it makes stale). */
  readonly #changed: (id: string) => void;
  /** Each session's updates in the order asked for (see WriteOrder). */
  readonly #order: WriteOrder<string>;

  /** `changed(id)` is called before each write to session `id`'s row (SessionListingPages.changed). */
  constructor(db: Kysely<Database>, changed: (id: string) => void) {
    this.#db = db;
    this.#changed = changed;
    this.#order = new WriteOrder(isShared(db));
  }

  /** Inserts a new session and registers its id and name (and backend id, if known) as lookup keys. */
  async insert(session: StoredSession): Promise<void> {
    this.#changed(session.id);
    await this.#db.transaction().execute((trx) => this.#insertRow(trx, session));
  }

  /**
   * Inserts a new session together with other writes, in one transaction: `write` receives the transaction and the
   * `insertRow` that inserts the session's row and keys in it (call it once). Resolves with what `write` resolves,
   * once committed.
   */
  async insertInTransaction<T>(
    session: StoredSession,
    write: (trx: Transaction<Database>, insertRow: InsertRow) => Promise<T>,
  ): Promise<T> {
    this.#changed(session.id);
    return this.#db.transaction().execute((trx) => write(trx, (placement) => this.#insertRow(trx, session, placement)));
  }

  async #insertRow(db: Kysely<Database>, session: StoredSession, placement?: Placement): Promise<void> {
    const row = sessionRowValues(session, placement);
    // Built once (see HotStatements): a launch burst inserts one row per launch.
    await this.#hot.execute(
      db,
      'insert session',
      row.map(([, value]) => value),
      (slot) =>
        db
          .insertInto('coding_sessions')
          .values(Object.fromEntries(row.map(([column], i) => [column, slot(i)])) as InsertableSessionRow),
    );
    await this.#setKey(db, session.id, session.id, 'id');
    await this.#setKey(db, session.name, session.id, 'name');
    if (session.backendSessionId) await this.#setKey(db, session.backendSessionId, session.id, 'backend');
  }

  /**
   * Updates the given fields; a new backend id also becomes a lookup key. `within` runs it inside that transaction
   * (another store's change that must commit together with it).
   */
  async update(id: string, patch: SessionPatch, within?: Kysely<Database>): Promise<void> {
    const columns = patchColumns(patch);
    if (Object.values(columns).every((v) => v === undefined)) return;
    this.#changed(id);
    // One statement per set of changed columns, compiled once (a session's updates have a few shapes).
    const changed = Object.entries(columns).filter(([, value]) => value !== undefined);
    const shape = `update:${changed.map(([column]) => column).join(',')}`;
    const write = async (db: Kysely<Database>): Promise<void> => {
      await this.#hot.execute(db, shape, [...changed.map(([, value]) => value), id], (slot) =>
        db
          .updateTable('coding_sessions')
          .set(Object.fromEntries(changed.map(([column], i) => [column, slot(i)])))
          .where('id', '=', slot<string>(changed.length)),
      );
      if (patch.backendSessionId) await this.#setKey(db, patch.backendSessionId, id, 'backend');
    };
    if (within) await write(within);
    else {
      const run = (): Promise<void> =>
        patch.backendSessionId ? this.#db.transaction().execute(write) : write(this.#db);
      await this.#order.run(id, run);
    }
  }

  async #setKey(db: Kysely<Database>, key: string, sessionId: string, kind: 'id' | 'name' | 'backend'): Promise<void> {
    // A key an older session holds (a name reused after eviction, a backend id resumed by a new session) moves to the newer one;
    // an id key is never taken from its own session.
    await this.#hot.execute(db, 'set key', [key, sessionId, kind], (slot) =>
      db
        .insertInto('session_keys')
        .values({ key: slot<string>(0), session_id: slot<string>(1), kind: slot<'id' | 'name' | 'backend'>(2) })
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet((eb) => ({ session_id: eb.ref('excluded.session_id'), kind: eb.ref('excluded.kind') }))
            .where('session_keys.kind', '!=', 'id'),
        ),
    );
  }

  /** Returns the session with this internal id, or null. */
  async get(id: string): Promise<StoredSession | null> {
    const row = await this.#db.selectFrom('coding_sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? sessionFromRow(row) : null;
  }

  /** Finds a session by internal id, name or backend session id. */
  async resolve(ref: string): Promise<StoredSession | null> {
    const row = await this.#db
      .selectFrom('session_keys as k')
      .innerJoin('coding_sessions as s', 's.id', 'k.session_id')
      .selectAll('s')
      .where('k.key', '=', ref)
      .executeTakeFirst();
    return row ? sessionFromRow(row) : null;
  }

  /** True when a stored session already uses `name`. */
  async nameTaken(name: string): Promise<boolean> {
    const rows = await this.#hot.rows(this.#db, 'name taken', [name], (slot) =>
      this.#db.selectFrom('coding_sessions').select('id').where('name', '=', slot<string>(0)).limit(1),
    );
    return rows.length > 0;
  }

  /** Lists sessions, newest first (ties: by id), optionally only those with the given statuses. */
  async list(statuses?: readonly SessionStatus[]): Promise<StoredSession[]> {
    let query = this.#db.selectFrom('coding_sessions').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc');
    if (statuses && statuses.length > 0) query = query.where('status', 'in', statuses);
    return (await query.execute()).map(sessionFromRow);
  }

  /** Deletes a session and its lookup keys. */
  async delete(id: string): Promise<void> {
    this.#changed(id);
    await this.#db.deleteFrom('coding_sessions').where('id', '=', id).execute();
  }

  /** Returns ids of the oldest non-active sessions beyond the newest `keep`; the caller deletes them and their logs. */
  async evictionCandidates(keep: number): Promise<string[]> {
    const rows = await this.#hot.rows(this.#db, 'eviction candidates', [keep], (slot) =>
      this.#db
        .selectFrom('coding_sessions')
        .select('id')
        .where('status', 'not in', ['starting', 'running', 'queued'])
        .orderBy((eb) => eb.fn.coalesce('completed_at', 'updated_at'), 'desc')
        .orderBy('id', 'desc')
        .limit(NO_LIMIT)
        .offset(slot<number>(0)),
    );
    return rows.map((r) => r.id);
  }
}

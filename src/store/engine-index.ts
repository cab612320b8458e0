// The index of the engine's sessions: where each session's log has been indexed up to, its last user activity, and
// the message ids it accepted. Everything here can be rebuilt from the logs (a missing row means "index from 0").
import type { Kysely, Selectable } from 'kysely';
import { GroupedLookup } from './grouped-lookup.ts';
import { HotStatements } from './hot-statements.ts';
import type { Database } from './tables/index.ts';

/** One indexed engine session. */
export interface EngineIndexRow {
  id: string;
  /** The stable key of its descriptor (same conversation → same key). */
  key: string;
  type: string;
  createdAt: number;
  updatedAt: number;
  lastUserAt: number | null;
  /** Every log record with a seq up to this one is reflected here (its message ids included). */
  indexedSeq: number;
}

/** A message id a session accepted, with the seq of its `incoming` record. */
export interface IndexedMessage {
  sessionId: string;
  messageId: string;
  seq: number;
}

/**
 * The largest number of rows one statement carries (an INSERT's rows, a lookup's ids). Batches are cut into, or padded
 * to, powers of two up to this, so that their statements come from a handful of SQL texts (each prepared once).
 */
const MAX_CHUNK = 128;

function toIndexRow(r: Selectable<Database['engine_sessions']>): EngineIndexRow {
  return {
    id: r.id,
    key: r.key,
    type: r.type,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastUserAt: r.last_user_at,
    indexedSeq: r.indexed_seq,
  };
}

/** `items` cut into consecutive chunks of MAX_CHUNK rows, then one each of falling powers of two (see MAX_CHUNK). */
function powerOfTwoChunks<T>(items: readonly T[]): T[][] {
  const chunks: T[][] = [];
  let at = 0;
  for (; items.length - at >= MAX_CHUNK; at += MAX_CHUNK) chunks.push(items.slice(at, at + MAX_CHUNK));
  for (let size = MAX_CHUNK / 2; size >= 1; size /= 2) {
    if (items.length - at < size) continue;
    chunks.push(items.slice(at, at + size));
    at += size;
  }
  return chunks;
}

/** `keys` padded to the next power of two by repeating the last (see MAX_CHUNK); at least one key. */
function padToPowerOfTwo<T>(keys: readonly T[]): T[] {
  const last = keys.at(-1);
  if (last === undefined) throw new Error('padToPowerOfTwo: no keys');
  let size = 1;
  while (size < keys.length) size *= 2;
  return [...keys, ...Array.from({ length: size - keys.length }, () => last)];
}

/** A (session, message id) pair looked up in the index. */
type MessageKey = Pick<IndexedMessage, 'sessionId' | 'messageId'>;

/** Reads and writes the engine's index tables (migration 100). */
export class EngineIndex {
  #db: Kysely<Database>;
  /** Message id lookups asked for at once (every accepted message asks one) share a query. */
  #messages: GroupedLookup<MessageKey>;
  /** The hot statements, compiled once per row count (a power of two up to MAX_CHUNK: the shape's name holds it). */
  readonly #hot = new HotStatements();

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#messages = new GroupedLookup((keys) => this.#findMessages(keys), MAX_CHUNK);
  }

  /** Every indexed session, by id. */
  async all(): Promise<Map<string, EngineIndexRow>> {
    const rows = await this.#db.selectFrom('engine_sessions').selectAll().execute();
    return new Map(rows.map((r) => [r.id, toIndexRow(r)]));
  }

  /** True when `sessionId` has accepted `messageId` (as far as the index knows). */
  hasMessage(sessionId: string, messageId: string): Promise<boolean> {
    return this.#messages.has({ sessionId, messageId });
  }

  /** Looks a group of (session, message id) pairs up with one query; returns the test of which were found. */
  async #findMessages(keys: readonly MessageKey[]): Promise<(key: MessageKey) => boolean> {
    const padded = padToPowerOfTwo(keys);
    const rows = await this.#lookup(padded);
    const found = new Map<string, Set<string>>();
    for (const r of rows) {
      let ids = found.get(r.session_id);
      if (!ids) found.set(r.session_id, (ids = new Set()));
      ids.add(r.message_id);
    }
    return (key) => found.get(key.sessionId)?.has(key.messageId) ?? false;
  }

  /** Writes session rows and accepted message ids in one transaction (one fsync of the WAL); resolves once committed. */
  async apply(sessions: readonly EngineIndexRow[], messages: readonly IndexedMessage[]): Promise<void> {
    if (sessions.length === 0 && messages.length === 0) return;
    await this.#db.transaction().execute(async (trx) => {
      for (const chunk of powerOfTwoChunks(sessions)) await this.#upsertSessions(trx, chunk);
      for (const chunk of powerOfTwoChunks(messages)) await this.#insertMessages(trx, chunk);
    });
  }

  /** Drops a session from the index (its log is gone or unusable); resolves once committed. */
  async forget(sessionId: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('engine_message_ids').where('session_id', '=', sessionId).execute();
      await trx.deleteFrom('engine_sessions').where('id', '=', sessionId).execute();
    });
  }

  /** SELECT of the pairs among `size` (session, message id) pairs that the index holds (slots: session, id, …). */
  #lookup(
    pairs: readonly MessageKey[],
  ): Promise<Pick<Selectable<Database['engine_message_ids']>, 'session_id' | 'message_id'>[]> {
    const values = pairs.flatMap((k) => [k.sessionId, k.messageId]);
    return this.#hot.rows(this.#db, `lookup ${pairs.length}`, values, (slot) =>
      this.#db
        .selectFrom('engine_message_ids')
        .select(['session_id', 'message_id'])
        .where((eb) =>
          eb(
            eb.refTuple('session_id', 'message_id'),
            'in',
            pairs.map((_, i) => eb.tuple(slot<string>(2 * i), slot<string>(2 * i + 1))),
          ),
        ),
    );
  }

  /** INSERT of these session rows, each replacing the row of its id (slots: each row's fields in EngineIndexRow order). */
  async #upsertSessions(trx: Kysely<Database>, sessions: readonly EngineIndexRow[]): Promise<void> {
    const values = sessions.flatMap((s) => [s.id, s.key, s.type, s.createdAt, s.updatedAt, s.lastUserAt, s.indexedSeq]);
    await this.#hot.execute(trx, `session upsert ${sessions.length}`, values, (slot) =>
      trx
        .insertInto('engine_sessions')
        .values(
          sessions.map((_, i) => ({
            id: slot<string>(7 * i),
            key: slot<string>(7 * i + 1),
            type: slot<string>(7 * i + 2),
            created_at: slot<number>(7 * i + 3),
            updated_at: slot<number>(7 * i + 4),
            last_user_at: slot<number | null>(7 * i + 5),
            indexed_seq: slot<number>(7 * i + 6),
          })),
        )
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            key: eb.ref('excluded.key'),
            type: eb.ref('excluded.type'),
            updated_at: eb.ref('excluded.updated_at'),
            last_user_at: eb.ref('excluded.last_user_at'),
            indexed_seq: eb.ref('excluded.indexed_seq'),
          })),
        ),
    );
  }

  /** INSERT of these accepted message ids, each skipped when the index has it already (slots: session, id, seq, …). */
  async #insertMessages(trx: Kysely<Database>, messages: readonly IndexedMessage[]): Promise<void> {
    const values = messages.flatMap((m) => [m.sessionId, m.messageId, m.seq]);
    await this.#hot.execute(trx, `message insert ${messages.length}`, values, (slot) =>
      trx
        .insertInto('engine_message_ids')
        .values(
          messages.map((_, i) => ({
            session_id: slot<string>(3 * i),
            message_id: slot<string>(3 * i + 1),
            seq: slot<number>(3 * i + 2),
          })),
        )
        .onConflict((oc) => oc.columns(['session_id', 'message_id']).doNothing()),
    );
  }
}

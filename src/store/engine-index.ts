// The index of the engine's sessions: where each session's log has been indexed up to, its last user activity, and
// the message ids it accepted. Everything here can be rebuilt from the logs (a missing row means "index from 0").
import type { Kysely, Selectable } from 'kysely';
import { GroupedLookup } from './grouped-lookup.ts';
import { QueryTemplate } from './query-template.ts';
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
  return { id: r.id, key: r.key, type: r.type, createdAt: r.created_at, updatedAt: r.updated_at, lastUserAt: r.last_user_at, indexedSeq: r.indexed_seq };
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
  /** The hot statements, compiled once per row count (a power of two up to MAX_CHUNK). */
  #lookups = new Map<number, QueryTemplate<Pick<Selectable<Database['engine_message_ids']>, 'session_id' | 'message_id'>>>();
  #sessionUpserts = new Map<number, QueryTemplate<unknown>>();
  #messageInserts = new Map<number, QueryTemplate<unknown>>();

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
    const query = this.#lookupTemplate(padded.length).bind(padded.flatMap((k) => [k.sessionId, k.messageId]));
    const { rows } = await this.#db.executeQuery(query);
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
      for (const chunk of powerOfTwoChunks(sessions)) {
        const values = chunk.flatMap((s) => [s.id, s.key, s.type, s.createdAt, s.updatedAt, s.lastUserAt, s.indexedSeq]);
        await trx.executeQuery(this.#sessionUpsertTemplate(chunk.length).bind(values));
      }
      for (const chunk of powerOfTwoChunks(messages)) {
        await trx.executeQuery(this.#messageInsertTemplate(chunk.length).bind(chunk.flatMap((m) => [m.sessionId, m.messageId, m.seq])));
      }
    });
  }

  /** Drops a session from the index (its log is gone or unusable); resolves once committed. */
  async forget(sessionId: string): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('engine_message_ids').where('session_id', '=', sessionId).execute();
      await trx.deleteFrom('engine_sessions').where('id', '=', sessionId).execute();
    });
  }

  /** SELECT of the pairs among `size` (session, message id) pairs that the index holds. */
  #lookupTemplate(size: number): QueryTemplate<Pick<Selectable<Database['engine_message_ids']>, 'session_id' | 'message_id'>> {
    let template = this.#lookups.get(size);
    if (!template) {
      const pairs = Array.from({ length: size }, (_, i) => [`session-${i}`, `message-${i}`] as const);
      const compiled = this.#db
        .selectFrom('engine_message_ids')
        .select(['session_id', 'message_id'])
        .where((eb) => eb(eb.refTuple('session_id', 'message_id'), 'in', pairs.map(([s, m]) => eb.tuple(s, m))))
        .compile();
      template = new QueryTemplate(compiled, pairs.flat());
      this.#lookups.set(size, template);
    }
    return template;
  }

  /** INSERT of `size` session rows, each replacing the row of its id (values in EngineIndexRow field order). */
  #sessionUpsertTemplate(size: number): QueryTemplate<unknown> {
    let template = this.#sessionUpserts.get(size);
    if (!template) {
      const rows = Array.from({ length: size }, (_, i) => ({
        id: `id-${i}`,
        key: `key-${i}`,
        type: `type-${i}`,
        created_at: i * 4,
        updated_at: i * 4 + 1,
        last_user_at: i * 4 + 2,
        indexed_seq: i * 4 + 3,
      }));
      const compiled = this.#db
        .insertInto('engine_sessions')
        .values(rows)
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            key: eb.ref('excluded.key'),
            type: eb.ref('excluded.type'),
            updated_at: eb.ref('excluded.updated_at'),
            last_user_at: eb.ref('excluded.last_user_at'),
            indexed_seq: eb.ref('excluded.indexed_seq'),
          })),
        )
        .compile();
      template = new QueryTemplate(compiled, rows.flatMap((r) => Object.values(r)));
      this.#sessionUpserts.set(size, template);
    }
    return template;
  }

  /** INSERT of `size` accepted message ids, each skipped when the index has it already (values: session, id, seq). */
  #messageInsertTemplate(size: number): QueryTemplate<unknown> {
    let template = this.#messageInserts.get(size);
    if (!template) {
      const rows = Array.from({ length: size }, (_, i) => ({ session_id: `session-${i}`, message_id: `message-${i}`, seq: i }));
      const compiled = this.#db
        .insertInto('engine_message_ids')
        .values(rows)
        .onConflict((oc) => oc.columns(['session_id', 'message_id']).doNothing())
        .compile();
      template = new QueryTemplate(compiled, rows.flatMap((r) => Object.values(r)));
      this.#messageInserts.set(size, template);
    }
    return template;
  }
}

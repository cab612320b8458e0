import type { Compilable, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { sql } from 'kysely';
import type { HarnessName, PermissionMode } from '../core/config.ts';
import type { CursorKey } from '../core/cursor.ts';
import { roundUsd } from '../core/usd.ts';
import type { PageRange, PageRow, SessionListing, SessionListingPage } from './coding-session-listings.ts';
import {
  listingFromRow,
  listingOf,
  listingPageQuery,
  pageKeysQuery,
  pageOfListings,
  selectListings,
} from './coding-session-listings.ts';
import { HotStatements } from './hot-statements.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';

/**
 * Lifecycle states of a coding session (the seed's five, plus `interrupted` for runs cut off by a daemon crash or a
 * lost node, and `queued` for a launch waiting in the cluster's queue for a node with a free slot).
 */
export const SESSION_STATUSES = [
  'starting',
  'running',
  'completed',
  'failed',
  'killed',
  'interrupted',
  'queued',
] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Statuses that hold a live agent process and count against maxSessions. */
export const ACTIVE_STATUSES: readonly SessionStatus[] = ['starting', 'running'];

/** True for a status that holds a live agent process. */
export function isActiveStatus(status: SessionStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}

/** One channel's view of a session: streaming live (`on`) or detached, and the last log seq it has seen. */
export interface ChannelView {
  on: boolean;
  seenSeq: number;
}

/** Where a queued launch may run: on one node (by name) and/or on a node with every one of these labels. */
export interface Placement {
  on?: string;
  labels?: readonly string[];
}

/** Everything needed to (re)start an agent run for a session. */
export interface LaunchSpec {
  harness: HarnessName;
  prompt: string;
  workdir: string;
  model?: string;
  maxBudgetUsd: number;
  permissionMode: PermissionMode;
  systemPrompt?: string;
  allowedTools?: string[];
  multiTurn: boolean;
  /** Backend session id to resume (Claude session id, Codex thread id, Gemini session id). */
  resumeBackendId?: string;
  forkSession: boolean;
  /**
   * The component that launched the session and handles its events itself (`linear-pipeline`, `code_run`); absent for
   * sessions people or the orchestrator launched. An owned session's events never wake the orchestrator.
   */
  owner?: string;
  /**
   * Limits in ms the node that runs the session enforces itself (a `code_run` turn: coding/code-run-watchdog.ts), so
   * they hold wherever it was placed and whatever becomes of the node that asked.
   */
  watchdog?: { inactivityMs: number; maxTotalMs: number; toolTimeoutMs: number };
  /**
   * The commit the working directory was at when the session was launched (`git rev-parse HEAD`); absent when it was
   * not a git repository, had no commits, or the session was launched before bases were recorded. `diff` diffs
   * against it; an in-place resume keeps it.
   */
  baseCommit?: string;
}

/** The persisted row of one coding session. */
export interface StoredSession {
  id: string;
  name: string;
  harness: HarnessName;
  status: SessionStatus;
  prompt: string;
  workdir: string;
  model: string | null;
  backendSessionId: string | null;
  originChannel: string;
  originSessionId: string | null;
  spec: LaunchSpec;
  costUsd: number;
  startedAt: number;
  completedAt: number | null;
  updatedAt: number;
  error: string | null;
  endReason: string | null;
  budgetExhausted: boolean;
  /** Chat channels that have looked at this session: whether they watch it live, and the last log seq they saw. */
  foreground: Record<string, ChannelView>;
  autoResponds: number;
  resumedFrom: string | null;
  forked: boolean;
  pid: number | null;
  /** The node of the cluster that runs (or ran) it; null while a launch waits in the queue (and for older rows). */
  node: string | null;
}

export type SessionPatch = Partial<Omit<StoredSession, 'id' | 'name' | 'harness' | 'startedAt'>>;

/** Aggregates over every run, running ones included (runs survive eviction of the sessions themselves). */
export interface SessionMetrics {
  totalCostUsd: number;
  costPerDay: Record<string, number>;
  sessionsByStatus: Record<'completed' | 'failed' | 'killed' | 'interrupted' | 'running', number>;
  totalLaunched: number;
  averageDurationMs: number;
  mostExpensive: { id: string; name: string; costUsd: number; prompt: string } | null;
}

/** A coding_sessions row as the database returns it. */
type SessionRow = Selectable<Database['coding_sessions']>;
type InsertableSessionRow = Insertable<Database['coding_sessions']>;

/** The stored session of a row (the one place a row becomes a StoredSession). */
export function sessionFromRow(row: SessionRow): StoredSession {
  const spec = JSON.parse(row.spec) as LaunchSpec;
  return {
    ...listingFromRow(row, spec.multiTurn, JSON.parse(row.foreground) as Record<string, ChannelView>),
    spec,
    originSessionId: row.origin_session_id,
    updatedAt: row.updated_at,
    autoResponds: row.auto_responds,
    pid: row.pid,
  };
}

/** The columns a patch changes (fields left undefined stay as they are; Kysely leaves undefined values out). */
function patchColumns(patch: SessionPatch): Updateable<Database['coding_sessions']> {
  return {
    status: patch.status,
    prompt: patch.prompt,
    workdir: patch.workdir,
    model: patch.model,
    backend_session_id: patch.backendSessionId,
    origin_channel: patch.originChannel,
    origin_session_id: patch.originSessionId,
    spec: patch.spec === undefined ? undefined : JSON.stringify(patch.spec),
    cost_usd: patch.costUsd,
    completed_at: patch.completedAt,
    updated_at: patch.updatedAt,
    error: patch.error,
    end_reason: patch.endReason,
    budget_exhausted: patch.budgetExhausted === undefined ? undefined : Number(patch.budgetExhausted),
    foreground: patch.foreground === undefined ? undefined : JSON.stringify(patch.foreground),
    auto_responds: patch.autoResponds,
    resumed_from: patch.resumedFrom,
    forked: patch.forked === undefined ? undefined : Number(patch.forked),
    pid: patch.pid,
    node: patch.node,
  };
}

/** Key of the advisory lock that hands out places in the launch queue one at a time (PostgreSQL). */
const QUEUE_SEQ_LOCK = 0x5b_0a_51;

/** Pages kept between writes; more distinct pages than this between two writes start the cache over. */
const PAGE_CACHE_SIZE = 64;

/** Pages whose sessions are remembered (see CodingSessionStore.#lastRead); more start over. */
const LAST_READ_SIZE = 1_024;

/** Listings kept for pages to share (see CodingSessionStore.#listings); more start the cache over. */
const LISTING_CACHE_SIZE = 4_096;

/** Day buckets of the per-day cost: epoch milliseconds divided in SQL (integer division on both databases). */
const MS_PER_DAY = 86_400_000;
const runDay = sql<number>`coalesce(ended_at, started_at) / 86400000`;

/** LIMIT for "all rows after OFFSET" (SQLite needs a LIMIT with an OFFSET; PostgreSQL takes this bigint as well). */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** Persistence of coding sessions, their three lookup keys (id, name, backend id) and their runs. */
export class CodingSessionStore {
  readonly #db: Kysely<Database>;
  /** Session list pages read since the last write to coding_sessions, by query and parameters. */
  #pages = new Map<string, SessionListingPage>();
  /** Counts writes to coding_sessions: a page read while one was issued is not cached. */
  #writes = 0;
  /** The sessions each page held when last read, by page (see page). */
  #lastRead = new Map<string, readonly string[]>();
  /** The hot-path SELECTs of the session list, compiled once per shape. */
  readonly #hot = new HotStatements();
  /**
   * The listings pages have read, by session id, until a write to that session: a page read after a write maps only
   * the rows that changed (shared like the pages: read them, never change them).
   */
  #listings = new Map<string, SessionListing>();

  /** True on PostgreSQL: other nodes write sessions too, so a page read here is never served again. */
  readonly #shared: boolean;

  /** The last write asked for per session, so the next one waits for it (see #inOrder). */
  readonly #writing = new Map<string, Promise<void>>();
  /** The last cost or end write asked for per run, likewise (a turn's cost must not land after a later one's). */
  readonly #runWriting = new Map<number, Promise<void>>();

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#shared = isShared(db);
  }

  /** Inserts a new session and registers its id and name (and backend id, if known) as lookup keys. */
  async insert(session: StoredSession): Promise<void> {
    this.#changed(session.id);
    await this.#db.transaction().execute((trx) => this.#insertRow(trx, session));
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
   * Inserts a new session and the start of its first run in one transaction (one fsync); `also` runs inside the same
   * transaction (an idempotency key's answer), given it to write in. Resolves with the run id once committed.
   */
  async insertLaunched(
    session: StoredSession,
    at: number,
    also?: (trx: Transaction<Database>) => Promise<void>,
  ): Promise<number> {
    this.#changed(session.id);
    return this.#db.transaction().execute(async (trx) => {
      await this.#insertRow(trx, session);
      const runId = await this.#startRun(trx, session, 'launch', at);
      await also?.(trx);
      return runId;
    });
  }

  /**
   * Inserts a launch that waits in the cluster's queue (status `queued`, no node yet) with where it may run; `also`
   * runs inside the same transaction (the NOTIFY that wakes the nodes, an idempotency key's answer). Resolves once
   * committed.
   */
  async insertQueued(
    session: StoredSession,
    placement: Placement,
    also?: (trx: Transaction<Database>) => Promise<void>,
  ): Promise<void> {
    this.#changed(session.id);
    await this.#db.transaction().execute(async (trx) => {
      // Queued in order: the nodes' enqueues take the next place one at a time (SQLite writes one at a time anyway).
      if (this.#shared) await sql`SELECT pg_advisory_xact_lock(${QUEUE_SEQ_LOCK})`.execute(trx);
      await this.#insertRow(trx, session, placement);
      await trx
        .updateTable('coding_sessions')
        .set((eb) => ({
          queue_seq: eb
            .selectFrom('coding_sessions as q')
            .select((sub) => sub(sub.fn.coalesce(sub.fn.max('q.queue_seq'), sub.lit(0)), '+', sub.lit(1)).as('next')),
        }))
        .where('id', '=', session.id)
        .execute();
      await also?.(trx);
    });
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
      // SQLite's one connection already runs them in order (and a chain there could wait on the transaction it is in).
      await (this.#shared ? this.#inOrder(this.#writing, id, run) : run());
    }
  }

  /**
   * Runs a session's writes one after another, in the order they were asked for: over PostgreSQL's pool two updates of
   * one session could otherwise commit out of order (a `running` landing after its `completed`).
   */
  async #inOrder<K>(queue: Map<K, Promise<void>>, key: K, write: () => Promise<void>): Promise<void> {
    const previous = queue.get(key) ?? Promise.resolve();
    const mine = previous.then(write, write);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    queue.set(key, settled);
    void settled.then(() => {
      if (queue.get(key) === settled) queue.delete(key);
    });
    await mine;
  }

  /** A run's writes in the order asked for over PostgreSQL's pool (see #inOrder); SQLite's one connection orders them. */
  async #runInOrder(runId: number, write: () => Promise<void>): Promise<void> {
    await (this.#shared ? this.#inOrder(this.#runWriting, runId, write) : write());
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

  /**
   * One page of the session list, newest first (by start time, then id), optionally only those with the given
   * statuses, starting after the sort key `after` of the previous page's last session. Uses the start-time indexes, so
   * a page costs the same whatever the number of stored sessions. Every write here drops the pages read so far; until
   * then, asking again for a page answers the page already read (a list polled by the web page, the CLI or a script
   * reads the database once per change, not once per call).
   */
  async page(options: {
    statuses?: readonly SessionStatus[];
    limit: number;
    after?: CursorKey;
  }): Promise<SessionListingPage> {
    const { statuses = [], limit, after } = options;
    const afterKey = after ? ([after[0], String(after[1])] as const) : undefined;
    if (this.#shared) {
      const range: PageRange = { statuses, limit: limit + 1, ...(afterKey ? { after: afterKey } : {}) };
      return pageOfListings((await this.#pageListings(range)).map(listingOf), limit);
    }
    const cacheKey = `${statuses.join(',')}\n${afterKey ? `${afterKey[0]}\n${afterKey[1]}` : ''}\n${limit}`;
    const cached = this.#pages.get(cacheKey);
    if (cached) return cached;
    const range: PageRange = { statuses, limit: limit + 1, ...(afterKey ? { after: afterKey } : {}) };
    const writes = this.#writes;
    // A page first read, or most of whose sessions were written since it was last read: one range scan.
    const before = this.#lastRead.get(cacheKey);
    const changed = before ? before.filter((id) => !this.#listings.has(id)).length * 2 > before.length : true;
    const listings = changed ? await this.#readPage(range) : await this.#readPageByKeys(range);
    if (!listings || writes !== this.#writes) {
      // A write came during the reads: the page read again in one statement, its listings kept nowhere.
      return pageOfListings((await this.#pageListings(range)).map(listingOf), limit);
    }
    for (const listing of listings) {
      if (this.#listings.has(listing.id)) continue;
      if (this.#listings.size >= LISTING_CACHE_SIZE) this.#listings.clear();
      this.#listings.set(listing.id, listing);
    }
    if (this.#lastRead.size >= LAST_READ_SIZE) this.#lastRead.clear();
    this.#lastRead.set(
      cacheKey,
      listings.map((l) => l.id),
    );
    const page = pageOfListings(listings, limit);
    if (this.#pages.size >= PAGE_CACHE_SIZE) this.#pages.clear();
    this.#pages.set(cacheKey, page);
    return page;
  }

  /** A page's listings in one range scan (the listings read before stand for the rows not written since). */
  async #readPage(range: PageRange): Promise<SessionListing[]> {
    return (await this.#pageListings(range)).map((row) => this.#listings.get(row.id) ?? listingOf(row));
  }

  /**
   * A page's sort keys (from the paging indexes alone), then the listings not read since their session's last write:
   * after a write, a page reads the keys and the rows that changed, not every row. Most of the page unread: one range
   * scan instead. Null when a row went missing between the two reads.
   */
  async #readPageByKeys(range: PageRange): Promise<SessionListing[] | null> {
    const keys = await this.#pageRows('keys', range, pageKeysQuery);
    const missing = keys.filter((k) => !this.#listings.has(k.id)).map((k) => k.id);
    if (missing.length * 2 > keys.length) return this.#readPage(range);
    const read = new Map<string, SessionListing>();
    if (missing.length > 0) {
      for (const row of await this.#listingRows(missing)) read.set(row.id, listingOf(row));
    }
    const listings = keys.map((k) => this.#listings.get(k.id) ?? read.get(k.id));
    return listings.every((l) => l !== undefined) ? listings : null;
  }

  /** The rows of a page SELECT (`query`: its listings or its sort keys), compiled once per shape (see HotStatements). */
  #pageRows<R>(
    name: 'keys' | 'page',
    range: PageRange,
    query: (db: Kysely<Database>, range: PageRange) => Compilable<R>,
  ): Promise<R[]> {
    const { statuses = [], limit, after } = range;
    const values = [...statuses, ...(after ?? []), limit];
    return this.#hot.rows(this.#db, `${name} ${statuses.length}${after ? ' after' : ''}`, values, (slot) =>
      query(this.#db, {
        statuses: statuses.map((_, i) => slot<SessionStatus>(i)),
        limit: slot<number>(values.length - 1),
        ...(after ? { after: [slot<number>(statuses.length), slot<string>(statuses.length + 1)] as const } : {}),
      }),
    );
  }

  /** The rows of a page's listings. */
  #pageListings(range: PageRange): Promise<PageRow[]> {
    return this.#pageRows('page', range, listingPageQuery);
  }

  /** The rows of the listings of these sessions, compiled once per number of ids (see HotStatements). */
  #listingRows(ids: readonly string[]): Promise<PageRow[]> {
    return this.#hot.rows(this.#db, `listings ${ids.length}`, ids, (slot) =>
      selectListings(this.#db).where(
        'id',
        'in',
        ids.map((_, i) => slot<string>(i)),
      ),
    );
  }

  /** Sessions starting or running per node (one grouped query), for `nodes` and placement. */
  async activeByNode(): Promise<Map<string, number>> {
    const rows = await this.#db
      .selectFrom('coding_sessions')
      .select((eb) => ['node', eb.fn.countAll<number>().as('n')])
      .where('status', 'in', ACTIVE_STATUSES)
      .where('node', 'is not', null)
      .groupBy('node')
      .execute();
    return new Map(rows.flatMap((r) => (r.node === null ? [] : [[r.node, Number(r.n)] as const])));
  }

  /** The sessions still starting or running on `node`, oldest first. */
  async activeOn(node: string): Promise<StoredSession[]> {
    const rows = await this.#db
      .selectFrom('coding_sessions')
      .selectAll()
      .where('node', '=', node)
      .where('status', 'in', ACTIVE_STATUSES)
      .orderBy('started_at')
      .orderBy('id')
      .execute();
    return rows.map(sessionFromRow);
  }

  /**
   * Applies `patch` to session `id` only if it is still starting or running on `node` (a compare-and-swap on the status
   * and the node: of two nodes taking over a lost one, one wins each session). `within`: inside that transaction. True
   * when it applied.
   */
  async patchIfActiveOn(id: string, node: string, patch: SessionPatch, within?: Kysely<Database>): Promise<boolean> {
    this.#changed(id);
    const result = await (within ?? this.#db)
      .updateTable('coding_sessions')
      .set(patchColumns(patch))
      .where('id', '=', id)
      .where('node', '=', node)
      .where('status', 'in', ACTIVE_STATUSES)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Cancels a queued launch (it never starts): `killed` with `reason`, only if still queued (a node may be claiming it).
   * Resolves with the final record, or null when it was no longer queued.
   */
  async cancelQueued(id: string, reason: string, now: number): Promise<StoredSession | null> {
    this.#changed(id);
    const row = await this.#db
      .updateTable('coding_sessions')
      .set({ status: 'killed', end_reason: reason, completed_at: now, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
    return row ? sessionFromRow(row) : null;
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

  /** Records the start of a run (a launch or a resume); resolves with the run id. */
  async startRun(session: StoredSession, kind: 'launch' | 'resume', at: number): Promise<number> {
    return this.#startRun(this.#db, session, kind, at);
  }

  async #startRun(
    db: Kysely<Database>,
    session: StoredSession,
    kind: 'launch' | 'resume',
    at: number,
  ): Promise<number> {
    const values = [session.id, session.name, session.prompt, session.harness, kind, at];
    const [row] = await this.#hot.rows(db, 'start run', values, (slot) =>
      db
        .insertInto('session_runs')
        .values({
          session_id: slot<string>(0),
          name: slot<string>(1),
          prompt: slot<string>(2),
          harness: slot<HarnessName>(3),
          kind: slot<'launch' | 'resume'>(4),
          status: 'running',
          started_at: slot<number>(5),
        })
        .returning('id'),
    );
    if (!row) throw new Error(`session ${session.id}: the run was not stored`);
    return row.id;
  }

  /** Records how a run ended: once per run, with the cost it added. */
  async endRun(runId: number, status: SessionStatus, costUsd: number, endedAt: number): Promise<void> {
    await this.#runInOrder(runId, async () => {
      await this.#hot.execute(this.#db, 'end run', [status, costUsd, endedAt, runId], (slot) =>
        this.#db
          .updateTable('session_runs')
          .set((eb) => ({
            status: slot<SessionStatus>(0),
            cost_usd: slot<number>(1),
            ended_at: slot<number>(2),
            duration_ms: eb(eb.val(slot<number>(2)), '-', eb.ref('started_at')),
          }))
          .where('id', '=', slot<number>(3))
          .where('ended_at', 'is', null),
      );
    });
  }

  /** Records what an open run has cost so far (after each turn), so stats count running sessions and crash-cut runs. */
  async setRunCost(runId: number, costUsd: number): Promise<void> {
    await this.#runInOrder(runId, async () => {
      await this.#hot.execute(this.#db, 'run cost', [costUsd, runId], (slot) =>
        this.#db
          .updateTable('session_runs')
          .set({ cost_usd: slot<number>(0) })
          .where('id', '=', slot<number>(1))
          .where('ended_at', 'is', null),
      );
    });
  }

  /**
   * Runs left open by a crash are closed as interrupted at `at` (keeping the cost recorded so far): every open run, or
   * with `node`, all but those of sessions another node runs now (in one statement, so a run started meanwhile on
   * another node is never closed). Resolves with how many.
   */
  async closeOpenRuns(at: number, options: { node?: string } = {}): Promise<number> {
    const { node } = options;
    let query = this.#db
      .updateTable('session_runs')
      .set((eb) => ({ status: 'interrupted', ended_at: at, duration_ms: eb(eb.val(at), '-', eb.ref('started_at')) }))
      .where('ended_at', 'is', null);
    if (node !== undefined) {
      query = query.where('session_id', 'not in', (eb) =>
        eb
          .selectFrom('coding_sessions as c')
          .select('c.id')
          .where('c.status', 'in', ACTIVE_STATUSES)
          .where('c.node', 'is not', null)
          .where('c.node', '!=', node),
      );
    }
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Aggregates cost, status counts, duration and the most expensive session over all runs. Cost counts what running
   * runs have spent so far (a running run's day is its start day, in UTC); durations count finished runs. Dollar
   * amounts are rounded to 1e-6.
   */
  async metrics(): Promise<SessionMetrics> {
    const runs = this.#db.selectFrom('session_runs');
    const totals = await runs
      .select((eb) => [
        eb.fn.coalesce(eb.fn.sum<number>('cost_usd'), eb.lit(0)).as('cost'),
        eb
          .selectFrom('session_runs')
          .select((e) => e.fn.coalesce(e.fn.avg<number>('duration_ms'), e.lit(0)).as('avg'))
          .where('ended_at', 'is not', null)
          .as('avg'),
        eb
          .selectFrom('session_runs')
          .select((e) => e.fn.countAll<number>().as('launched'))
          .where('kind', '=', 'launch')
          .as('launched'),
      ])
      .executeTakeFirstOrThrow();
    const perDay = await runs
      .select((eb) => [runDay.as('day'), eb.fn.sum<number>('cost_usd').as('cost')])
      .groupBy(runDay)
      .having((eb) => eb.or([eb(eb.fn.sum('cost_usd'), '>', 0), eb(eb.fn.max('ended_at'), 'is not', null)]))
      .orderBy('day')
      .execute();
    const byStatus = await runs
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    const top = await runs
      .select((eb) => [
        'session_id',
        eb.fn.max('name').as('name'),
        eb.fn.max('prompt').as('prompt'),
        eb.fn.sum<number>('cost_usd').as('cost'),
      ])
      .groupBy('session_id')
      .having((eb) => eb(eb.fn.sum('cost_usd'), '>', 0))
      .orderBy('cost', 'desc')
      .limit(1)
      .executeTakeFirst();
    const sessionsByStatus = { completed: 0, failed: 0, killed: 0, interrupted: 0, running: 0 };
    for (const { status, n } of byStatus) {
      if (status in sessionsByStatus) sessionsByStatus[status as keyof typeof sessionsByStatus] = Number(n);
    }
    return {
      totalCostUsd: roundUsd(Number(totals.cost)),
      costPerDay: Object.fromEntries(
        perDay.map((d) => [new Date(Number(d.day) * MS_PER_DAY).toISOString().slice(0, 10), roundUsd(Number(d.cost))]),
      ),
      sessionsByStatus,
      totalLaunched: Number(totals.launched),
      averageDurationMs: Math.round(Number(totals.avg)),
      mostExpensive: top
        ? { id: top.session_id, name: top.name, costUsd: roundUsd(Number(top.cost)), prompt: top.prompt.slice(0, 80) }
        : null,
    };
  }

  /** Drops the cached pages and the listing of session `id`: a write to its row is under way. */
  #changed(id: string): void {
    this.#writes += 1;
    this.#pages.clear();
    this.#listings.delete(id);
  }
}

/** A new session's row as (column, value) pairs in one fixed order, for the insert built once per shape. */
function sessionRowValues(session: StoredSession, placement?: Placement): [keyof InsertableSessionRow, unknown][] {
  return [
    ['id', session.id],
    ['name', session.name],
    ['harness', session.harness],
    ['status', session.status],
    ['prompt', session.prompt],
    ['workdir', session.workdir],
    ['model', session.model],
    ['backend_session_id', session.backendSessionId],
    ['origin_channel', session.originChannel],
    ['origin_session_id', session.originSessionId],
    ['spec', JSON.stringify(session.spec)],
    ['cost_usd', session.costUsd],
    ['started_at', session.startedAt],
    ['completed_at', session.completedAt],
    ['updated_at', session.updatedAt],
    ['error', session.error],
    ['end_reason', session.endReason],
    ['budget_exhausted', Number(session.budgetExhausted)],
    ['foreground', JSON.stringify(session.foreground)],
    ['auto_responds', session.autoResponds],
    ['resumed_from', session.resumedFrom],
    ['forked', Number(session.forked)],
    ['pid', session.pid],
    ['node', session.node],
    ['place_on', placement?.on ?? null],
    ['place_labels', placement?.labels && placement.labels.length > 0 ? JSON.stringify(placement.labels) : null],
  ];
}

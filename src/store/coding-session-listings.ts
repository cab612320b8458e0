// What a session list reads of the coding sessions: the listing (a stored session without what only a run needs),
// its page, the page SELECTs (portable: the paging indexes order by start time, then id) and the row mapping.
import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import { sql } from 'kysely';
import type { CursorKey } from '../core/cursor.ts';
import type { ChannelView, LaunchSpec, SessionStatus, StoredSession } from './coding-session-types.ts';
import type { Database } from './tables/index.ts';

/**
 * What a session list shows of a stored session: the row without what only a run needs (the launch spec is reduced to
 * `multiTurn`).
 */
export type SessionListing = Omit<StoredSession, 'spec' | 'originSessionId' | 'updatedAt' | 'autoResponds' | 'pid'> & {
  spec: Pick<LaunchSpec, 'multiTurn'>;
};

/**
 * One page of listed sessions, newest first, and the sort key to continue after (null on the last page). Pages are
 * shared between callers until the next write (see SessionListingPages.page): read them, never change them.
 */
export interface SessionListingPage {
  readonly sessions: readonly Readonly<SessionListing>[];
  readonly next: CursorKey | null;
}

/** The columns a listing reads as they are (the spec only for `multiTurn`, see MULTI_TURN_PATTERN). */
const LISTING_COLUMNS = [
  'id',
  'name',
  'harness',
  'status',
  'prompt',
  'workdir',
  'model',
  'backend_session_id',
  'origin_channel',
  'cost_usd',
  'started_at',
  'completed_at',
  'error',
  'end_reason',
  'budget_exhausted',
  'foreground',
  'resumed_from',
  'forked',
  'node',
] as const;

/**
 * How a listing reads the spec's `multiTurn` (JSON paths are not portable, and a page should neither copy nor parse
 * every row's prompts): a LIKE on the spec's text. Exact for what this store writes: the spec is `JSON.stringify`'d,
 * so the key is followed by `":` with no space, and inside a JSON string every `"` is escaped (`\"`), so no string
 * value can hold `Turn":`.
 */
const MULTI_TURN_PATTERN = '%"multiTurn":true%';

type ListingRow = Pick<Selectable<Database['coding_sessions']>, (typeof LISTING_COLUMNS)[number]>;

/** A page of these listings (`limit` + 1 read: the one more says another page follows). */
export function pageOfListings(listings: SessionListing[], limit: number): SessionListingPage {
  const more = listings.length > limit;
  if (more) listings.length = limit;
  const last = listings.at(-1);
  return { sessions: listings, next: more && last ? [last.startedAt, last.id] : null };
}

/** A row of a listing SELECT: the listing's columns and the spec's `multiTurn` as 0/1. */
export type PageRow = ListingRow & { multi_turn: number };

/** The listing of a listing SELECT's row. */
export function listingOf(row: PageRow): SessionListing {
  return listingFromRow(row, row.multi_turn === 1, listedViews(row.foreground));
}

/** Parsed foreground views of listings by their JSON (most sessions have one of a few); frozen, as listings share them. */
const LISTED_VIEWS = new Map<string, Record<string, ChannelView>>();
const LISTED_VIEWS_SIZE = 256;

/** The (shared, frozen) foreground views of this JSON. */
function listedViews(json: string): Record<string, ChannelView> {
  let views = LISTED_VIEWS.get(json);
  if (!views) {
    views = JSON.parse(json) as Record<string, ChannelView>;
    for (const view of Object.values(views)) Object.freeze(view);
    Object.freeze(views);
    if (LISTED_VIEWS.size >= LISTED_VIEWS_SIZE) LISTED_VIEWS.clear();
    LISTED_VIEWS.set(json, views);
  }
  return views;
}

/**
 * The listing of a row; `multiTurn` comes from the spec (parsed, for a whole row) or from the listing's LIKE, and
 * `foreground` from the row's JSON (parsed by the caller).
 */
export function listingFromRow(
  row: ListingRow,
  multiTurn: boolean,
  foreground: Record<string, ChannelView>,
): SessionListing {
  return {
    id: row.id,
    name: row.name,
    harness: row.harness,
    status: row.status,
    prompt: row.prompt,
    workdir: row.workdir,
    model: row.model,
    backendSessionId: row.backend_session_id,
    originChannel: row.origin_channel,
    spec: { multiTurn },
    costUsd: row.cost_usd,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    error: row.error,
    endReason: row.end_reason,
    budgetExhausted: row.budget_exhausted === 1,
    foreground,
    resumedFrom: row.resumed_from,
    forked: row.forked === 1,
    node: row.node,
  };
}

/** Which page of the session list: its statuses (none: all), its size and the sort key it starts after. */
export interface PageRange {
  statuses?: readonly SessionStatus[];
  limit: number;
  after?: readonly [number, string];
}

/** `query` narrowed to one page: newest first (ties by id), the statuses, after the cursor. */
function pageOf<O>(
  query: SelectQueryBuilder<Database, 'coding_sessions', O>,
  range: PageRange,
): SelectQueryBuilder<Database, 'coding_sessions', O> {
  const { statuses = [], limit, after } = range;
  let page = query.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit);
  if (statuses.length > 0) page = page.where('status', 'in', statuses);
  if (after) page = page.where((eb) => eb(eb.refTuple('started_at', 'id'), '<', eb.tuple(after[0], after[1])));
  return page;
}

/** The listing columns of coding_sessions, the spec's `multiTurn` as 0/1 among them. */
export function selectListings(db: Kysely<Database>) {
  return db
    .selectFrom('coding_sessions')
    .select(LISTING_COLUMNS)
    .select((eb) =>
      eb
        .case()
        .when('spec', 'like', sql.lit(MULTI_TURN_PATTERN))
        .then(eb.lit(1))
        .else(eb.lit(0))
        .end()
        .as('multi_turn'),
    );
}

/** One page of the session list in one SELECT (exported for the benchmark, which runs it bare beside the store). */
export function listingPageQuery(db: Kysely<Database>, range: PageRange) {
  return pageOf(selectListings(db), range);
}

/** The sort keys of one page: read from the paging indexes alone. */
export function pageKeysQuery(db: Kysely<Database>, range: PageRange) {
  return pageOf(db.selectFrom('coding_sessions').select(['id', 'started_at']), range);
}

// The session list's pages, read through a cache: a page asked for again before the next write to coding_sessions is
// the page already read, and a page read after a few writes reads only the listings that changed. On PostgreSQL
// (other nodes write too) every page is read anew.
import type { Compilable, Kysely } from 'kysely';
import type { CursorKey } from '../core/cursor.ts';
import type { PageRange, PageRow, SessionListing, SessionListingPage } from './coding-session-listings.ts';
import {
  listingOf,
  listingPageQuery,
  pageKeysQuery,
  pageOfListings,
  selectListings,
} from './coding-session-listings.ts';
import type { SessionStatus } from './coding-session-types.ts';
import { HotStatements } from './hot-statements.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';

/** Pages kept between writes; more distinct pages than this between two writes start the cache over. */
const PAGE_CACHE_SIZE = 64;

/** Pages whose sessions are remembered (see SessionListingPages.#lastRead); more start over. */
const LAST_READ_SIZE = 1_024;

/** Listings kept for pages to share (see SessionListingPages.#listings); more start the cache over. */
const LISTING_CACHE_SIZE = 4_096;

/**
 * Pages of the session list (see page). The coding-session stores call `changed` before each write to a session's row,
 * which drops the pages read so far and that session's listing.
 */
export class SessionListingPages {
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

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#shared = isShared(db);
  }

  /**
   * One page of the session list, newest first (by start time, then id), optionally only those with the given
   * statuses, starting after the sort key `after` of the previous page's last session. Uses the start-time indexes, so
   * a page costs the same whatever the number of stored sessions. Every write to a row (see changed) drops the pages
   * read so far; until then, asking again for a page answers the page already read (a list polled by the web page, the
   * CLI or a script reads the database once per change, not once per call).
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

  /** Drops the cached pages and the listing of session `id`: a write to its row is under way. */
  changed(id: string): void {
    this.#writes += 1;
    this.#pages.clear();
    this.#listings.delete(id);
  }
}

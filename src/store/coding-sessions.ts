// The coding-session store its callers use: one facade over the parts that each hold one job (the rows and their
// lookup keys, the cluster's nodes and queued launches, the runs and their metrics, the list's pages), built over one
// database and wired so every write to a row drops the pages it makes stale. A launch's row and its first run commit
// together here.
import type { Kysely, Transaction } from 'kysely';
import type { CursorKey } from '../core/cursor.ts';
import type { SessionListingPage } from './coding-session-listings.ts';
import { SessionNodeStore } from './coding-session-nodes.ts';
import { SessionListingPages } from './coding-session-pages.ts';
import { SessionRowStore } from './coding-session-row-store.ts';
import type { SessionMetrics } from './coding-session-runs.ts';
import { SessionRunStore } from './coding-session-runs.ts';
import type { Placement, SessionPatch, SessionStatus, StoredSession } from './coding-session-types.ts';
import type { Database } from './tables/index.ts';

/** Persistence of coding sessions, their three lookup keys (id, name, backend id) and their runs. */
export class CodingSessionStore {
  readonly #rows: SessionRowStore;
  readonly #nodes: SessionNodeStore;
  readonly #runs: SessionRunStore;
  readonly #pages: SessionListingPages;

  constructor(db: Kysely<Database>) {
    const pages = new SessionListingPages(db);
    const changed = (id: string): void => pages.changed(id);
    this.#pages = pages;
    this.#rows = new SessionRowStore(db, changed);
    this.#nodes = new SessionNodeStore(db, this.#rows, changed);
    this.#runs = new SessionRunStore(db);
  }

  /** Inserts a new session and registers its id and name (and backend id, if known) as lookup keys. */
  insert(session: StoredSession): Promise<void> {
    return this.#rows.insert(session);
  }

  /**
   * Inserts a new session and the start of its first run in one transaction (one fsync); `also` runs inside the same
   * transaction (an idempotency key's answer), given it to write in. Resolves with the run id once committed.
   */
  insertLaunched(
    session: StoredSession,
    at: number,
    also?: (trx: Transaction<Database>) => Promise<void>,
  ): Promise<number> {
    return this.#rows.insertInTransaction(session, async (trx, insertRow) => {
      await insertRow();
      const runId = await this.#runs.startRun(session, 'launch', at, trx);
      await also?.(trx);
      return runId;
    });
  }

  /**
   * Inserts a launch that waits in the cluster's queue (status `queued`, no node yet) with where it may run; `also`
   * runs inside the same transaction (the NOTIFY that wakes the nodes, an idempotency key's answer). Resolves once
   * committed.
   */
  insertQueued(
    session: StoredSession,
    placement: Placement,
    also?: (trx: Transaction<Database>) => Promise<void>,
  ): Promise<void> {
    return this.#nodes.insertQueued(session, placement, also);
  }

  /**
   * Updates the given fields; a new backend id also becomes a lookup key. `within` runs it inside that transaction
   * (another store's change that must commit together with it).
   */
  update(id: string, patch: SessionPatch, within?: Kysely<Database>): Promise<void> {
    return this.#rows.update(id, patch, within);
  }

  /** Returns the session with this internal id, or null. */
  get(id: string): Promise<StoredSession | null> {
    return this.#rows.get(id);
  }

  /** Finds a session by internal id, name or backend session id. */
  resolve(ref: string): Promise<StoredSession | null> {
    return this.#rows.resolve(ref);
  }

  /** True when a stored session already uses `name`. */
  nameTaken(name: string): Promise<boolean> {
    return this.#rows.nameTaken(name);
  }

  /** Lists sessions, newest first (ties: by id), optionally only those with the given statuses. */
  list(statuses?: readonly SessionStatus[]): Promise<StoredSession[]> {
    return this.#rows.list(statuses);
  }

  /** One page of the session list, newest first, cached until the next write (see SessionListingPages.page). */
  page(options: {
    statuses?: readonly SessionStatus[];
    limit: number;
    after?: CursorKey;
  }): Promise<SessionListingPage> {
    return this.#pages.page(options);
  }

  /** Sessions starting or running per node (one grouped query), for `nodes` and placement. */
  activeByNode(): Promise<Map<string, number>> {
    return this.#nodes.activeByNode();
  }

  /** The sessions still starting or running on `node`, oldest first. */
  activeOn(node: string): Promise<StoredSession[]> {
    return this.#nodes.activeOn(node);
  }

  /**
   * Applies `patch` to session `id` only if it is still starting or running on `node` (see
   * SessionNodeStore.patchIfActiveOn). `within`: inside that transaction. True when it applied.
   */
  patchIfActiveOn(id: string, node: string, patch: SessionPatch, within?: Kysely<Database>): Promise<boolean> {
    return this.#nodes.patchIfActiveOn(id, node, patch, within);
  }

  /** Cancels a queued launch if still queued; resolves with the final record, or null (see SessionNodeStore). */
  cancelQueued(id: string, reason: string, now: number): Promise<StoredSession | null> {
    return this.#nodes.cancelQueued(id, reason, now);
  }

  /** Deletes a session and its lookup keys. */
  delete(id: string): Promise<void> {
    return this.#rows.delete(id);
  }

  /** Returns ids of the oldest non-active sessions beyond the newest `keep`; the caller deletes them and their logs. */
  evictionCandidates(keep: number): Promise<string[]> {
    return this.#rows.evictionCandidates(keep);
  }

  /** Records the start of a run (a launch or a resume); resolves with the run id. */
  startRun(session: StoredSession, kind: 'launch' | 'resume', at: number): Promise<number> {
    return this.#runs.startRun(session, kind, at);
  }

  /** Records how a run ended: once per run, with the cost it added. */
  endRun(runId: number, status: SessionStatus, costUsd: number, endedAt: number): Promise<void> {
    return this.#runs.endRun(runId, status, costUsd, endedAt);
  }

  /** Records what an open run has cost so far (after each turn), so stats count running sessions and crash-cut runs. */
  setRunCost(runId: number, costUsd: number): Promise<void> {
    return this.#runs.setRunCost(runId, costUsd);
  }

  /** Closes the runs a crash left open as interrupted at `at` (see SessionRunStore.closeOpenRuns); resolves how many. */
  closeOpenRuns(at: number, options: { node?: string } = {}): Promise<number> {
    return this.#runs.closeOpenRuns(at, options);
  }

  /** Aggregates cost, status counts, duration and the most expensive session over all runs (see SessionRunStore). */
  metrics(): Promise<SessionMetrics> {
    return this.#runs.metrics();
  }
}

// The dispatch store its callers use: one facade over the parts that each hold one job (the dispatch rows and their
// compare-and-swap, the queue and the cluster's claims, the coding sessions working for a dispatch), built over one
// database. The types are in linear-dispatch-types.ts, the row mapping in linear-dispatch-rows.ts.
import type { Kysely } from 'kysely';
import { DispatchClaims } from './linear-dispatch-claims.ts';
import { DispatchRecordStore } from './linear-dispatch-records.ts';
import { DispatchSessionStore } from './linear-dispatch-sessions.ts';
import type {
  Claimant,
  DispatchPatch,
  DispatchRecord,
  DispatchSession,
  DispatchStatus,
  NewDispatch,
  SessionEndCause,
} from './linear-dispatch-types.ts';
import type { Database } from './tables/index.ts';

/**
 * Durable dispatch state. Every status change is one conditional UPDATE (compare-and-swap on the expected status, and
 * attempt when given), so of many concurrent callers exactly one wins, across connections and processes. Which edges
 * exist is the pipeline's rule (dispatch-transitions.ts); the store runs the swap it is handed.
 */
export class DispatchStore {
  readonly #db: Kysely<Database>;
  readonly #records: DispatchRecordStore;
  readonly #claims: DispatchClaims;
  readonly #sessions: DispatchSessionStore;

  /** A store over `db`; with `owner`, the view of that node (see ownedBy). */
  constructor(db: Kysely<Database>, owner?: string) {
    this.#db = db;
    this.#records = new DispatchRecordStore(db, owner);
    this.#claims = new DispatchClaims(db);
    this.#sessions = new DispatchSessionStore(db);
  }

  /**
   * The same store as seen by the node `node` running its dispatches in a cluster: `compareAndSwap`, `update` and `touch`
   * change a dispatch only while its `node` is `node`. A node declared lost whose dispatch was released (node cleared)
   * or taken by another node can no longer move it, even before it learns that it was declared lost.
   */
  ownedBy(node: string): DispatchStore {
    return new DispatchStore(this.#db, node);
  }

  /** Inserts a new dispatch as `queued`, or returns the issue's active one with `created: false` (see the records). */
  insert(input: NewDispatch): Promise<{ record: DispatchRecord; created: boolean }> {
    return this.#records.insert(input);
  }

  /** A dispatch by id. */
  get(id: string): Promise<DispatchRecord | null> {
    return this.#records.get(id);
  }

  /** The dispatch in progress for an issue, if any. */
  activeForIssue(issueId: string): Promise<DispatchRecord | null> {
    return this.#records.activeForIssue(issueId);
  }

  /** The newest dispatch linked to a Linear agent session (ties: the later queue seq, then id), if any. */
  latestForAgentSession(agentSessionId: string): Promise<DispatchRecord | null> {
    return this.#records.latestForAgentSession(agentSessionId);
  }

  /** The newest dispatch of an issue (by id or identifier; ties: the later queue seq, then id), if any. */
  latestForIssue(ref: string): Promise<DispatchRecord | null> {
    return this.#records.latestForIssue(ref);
  }

  /** Dispatches, oldest first (ties in arrival order: queue seq, then id), optionally filtered by status. */
  list(statuses?: readonly DispatchStatus[]): Promise<DispatchRecord[]> {
    return this.#records.list(statuses);
  }

  /**
   * Moves a dispatch from one of `from` to `to` in one conditional UPDATE, optionally only at the expected attempt
   * (see DispatchRecordStore.compareAndSwap). Resolves to the new record, or null when another caller won.
   */
  compareAndSwap(
    id: string,
    from: DispatchStatus | readonly DispatchStatus[],
    to: DispatchStatus,
    now: number,
    options: { attempt?: number; patch?: DispatchPatch } = {},
  ): Promise<DispatchRecord | null> {
    return this.#records.compareAndSwap(id, from, to, now, options);
  }

  /** Takes a slot for the oldest queued dispatch under `cap` (see DispatchClaims.claimNextQueued), or null. */
  claimNextQueued(cap: number, now: number, claimant?: Claimant): Promise<DispatchRecord | null> {
    return this.#claims.claimNextQueued(cap, now, claimant);
  }

  /** Releases the unfinished dispatches a lost node owned, for another node to take. Returns them. */
  releaseNode(node: string, now: number): Promise<DispatchRecord[]> {
    return this.#claims.releaseNode(node, now);
  }

  /** Takes the oldest released dispatch `claimant` can run (see DispatchClaims.claimReleased), or null. */
  claimReleased(claimant: Claimant, now: number): Promise<DispatchRecord | null> {
    return this.#claims.claimReleased(claimant, now);
  }

  /** 1-based position of a queued dispatch in the queue, or null when it is not queued. */
  queuePosition(id: string): Promise<number | null> {
    return this.#claims.queuePosition(id);
  }

  /** Updates fields that are not the status (worktree path, context, activity time). Returns the new record. */
  update(id: string, patch: DispatchPatch, now: number): Promise<DispatchRecord | null> {
    return this.#records.update(id, patch, now);
  }

  /** Records activity on a dispatch (the monitor marks dispatches without any for `staleAfterSec` as stuck). */
  touch(id: string, now: number): Promise<void> {
    return this.#records.touch(id, now);
  }

  /** Deletes finished dispatches (and their session map) completed before `before`. Returns how many. */
  prune(before: number): Promise<number> {
    return this.#records.prune(before);
  }

  /** Maps a coding session to a dispatch phase. */
  addSession(session: Omit<DispatchSession, 'seq' | 'endCause' | 'endedAt'>): Promise<DispatchSession> {
    return this.#sessions.addSession(session);
  }

  /** The dispatch phase a coding session works for, if it is one of the pipeline's. */
  session(sessionId: string): Promise<DispatchSession | null> {
    return this.#sessions.session(sessionId);
  }

  /** The newest session of a dispatch (the one its current phase runs in), if any. */
  currentSession(dispatchId: string): Promise<DispatchSession | null> {
    return this.#sessions.currentSession(dispatchId);
  }

  /** Every session of a dispatch, oldest first. */
  sessions(dispatchId: string): Promise<DispatchSession[]> {
    return this.#sessions.sessions(dispatchId);
  }

  /** Records why the pipeline is ending a session, before it kills it; the first cause wins. Returns whether set. */
  setEndCause(sessionId: string, cause: SessionEndCause): Promise<boolean> {
    return this.#sessions.setEndCause(sessionId, cause);
  }

  /** Marks a session's end as handled; true only for the one caller that marks it first. */
  closeSession(sessionId: string, now: number): Promise<boolean> {
    return this.#sessions.closeSession(sessionId, now);
  }
}

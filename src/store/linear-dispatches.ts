import type { ExpressionBuilder, Kysely, Selectable, SelectQueryBuilder, Updateable } from 'kysely';
import { sql } from 'kysely';
import type { HarnessName } from '../core/config.ts';
import type {
  Claimant,
  DispatchContextData,
  DispatchPatch,
  DispatchRecord,
  DispatchSession,
  DispatchStatus,
  NewDispatch,
  SessionEndCause,
} from './linear-dispatch-types.ts';
import { ACTIVE_DISPATCH_STATUSES, FINISHED_DISPATCH_STATUSES, SLOT_STATUSES } from './linear-dispatch-types.ts';
import { memberServing } from './node-fence.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';

/** Key of the advisory lock that serializes the cluster's dispatch claims (PostgreSQL). */
const DISPATCH_CLAIM_LOCK = 0x5b_0a_d1;

type DispatchTable = Database['linear_dispatches'];
type DispatchRow = Selectable<DispatchTable>;
type SessionRow = Selectable<Database['linear_dispatch_sessions']>;

/** A dispatch row as the domain sees it. */
function dispatchOf(row: DispatchRow): DispatchRecord {
  return {
    id: row.id,
    issueId: row.issue_id,
    identifier: row.identifier,
    title: row.title,
    agentSessionId: row.agent_session_id,
    status: row.status,
    attempt: row.attempt,
    roundStart: row.round_start,
    tier: row.tier,
    tierReason: row.tier_reason,
    harness: row.harness,
    model: row.model,
    auditHarness: row.audit_harness,
    auditModel: row.audit_model,
    profile: row.profile,
    repoPath: row.repo_path,
    branch: row.branch,
    worktreePath: row.worktree_path,
    context: JSON.parse(row.context) as DispatchContextData,
    stopRequested: row.stop_requested !== 0,
    queueSeq: row.queue_seq,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastActivityAt: row.last_activity_at,
    completedAt: row.completed_at,
    node: row.node,
  };
}

/** A dispatch-session row as the domain sees it. */
function sessionOf(row: SessionRow): DispatchSession {
  return {
    seq: row.seq,
    sessionId: row.session_id,
    dispatchId: row.dispatch_id,
    phase: row.phase,
    attempt: row.attempt,
    try: row.try,
    endCause: row.end_cause,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

/** The columns a patch sets (a nullable field given as null or undefined is cleared). */
function patchColumns(patch: DispatchPatch): Updateable<DispatchTable> {
  const columns: Updateable<DispatchTable> = {};
  if (patch.attempt !== undefined) columns.attempt = patch.attempt;
  if (patch.roundStart !== undefined) columns.round_start = patch.roundStart;
  if ('lastError' in patch) columns.last_error = patch.lastError ?? null;
  if (patch.stopRequested !== undefined) columns.stop_requested = patch.stopRequested ? 1 : 0;
  if ('worktreePath' in patch) columns.worktree_path = patch.worktreePath ?? null;
  if (patch.context !== undefined) columns.context = JSON.stringify(patch.context);
  if ('agentSessionId' in patch) columns.agent_session_id = patch.agentSessionId ?? null;
  if (patch.lastActivityAt !== undefined) columns.last_activity_at = patch.lastActivityAt;
  return columns;
}

/**
 * The back of the queue: one past the highest queue seq given so far (a subquery of the statement it is used in). Given
 * at insert too, so among dispatches created in the same millisecond it is their arrival order (the lists' tie-break,
 * where SQLite's rowid was: PostgreSQL has none).
 */
function nextQueueSeq(eb: ExpressionBuilder<Database, 'linear_dispatches'>) {
  return eb
    .selectFrom('linear_dispatches')
    .select((sub) => sub(sub.fn.coalesce(sub.fn.max('queue_seq'), sub.lit(0)), '+', sub.lit(1)).as('next'));
}

/** True when `claimant` may claim inside `trx`: unfenced, or its row is `up` under its current incarnation. */
function mayClaim(trx: Kysely<Database>, claimant: Claimant | undefined): Promise<boolean> | boolean {
  if (!claimant?.incarnation) return true;
  return memberServing(trx, {
    node: claimant.node,
    incarnation: claimant.incarnation(),
    ...(claimant.idleTimeoutMs !== undefined ? { idleTimeoutMs: claimant.idleTimeoutMs } : {}),
  });
}

/**
 * The condition that a dispatch row is one `claimant` can run: its repository is a workspace root of the node or
 * under one (compared by prefix with the separator, in SQL both databases run), and its worker and audit harnesses are
 * the node's.
 */
export function runnableBy(eb: ExpressionBuilder<Database, 'linear_dispatches'>, claimant: Claimant) {
  const roots = claimant.workspaces.map((w) => w.replace(/\/+$/, '') || '/');
  if (roots.length === 0 || claimant.harnesses.length === 0) return eb.lit(false);
  const inRoot = roots.map((root) => {
    const prefix = root.endsWith('/') ? root : `${root}/`;
    return eb.or([
      eb('repo_path', '=', root),
      eb(eb.fn('substr', ['repo_path', eb.lit(1), eb.lit(prefix.length)]), '=', prefix),
    ]);
  });
  return eb.and([
    eb.or(inRoot),
    eb('harness', 'in', claimant.harnesses as HarnessName[]),
    eb('audit_harness', 'in', claimant.harnesses as HarnessName[]),
  ]);
}

/** A SELECT of whole dispatch rows. */
type DispatchSelect = SelectQueryBuilder<Database, 'linear_dispatches', Selectable<Database['linear_dispatches']>>;

/**
 * `qb` in the dispatches' arrival order: creation time, then queue seq (one past the highest at insert, so it keeps
 * insertion order within one millisecond), then id; `desc` for newest first.
 */
function byArrival(qb: DispatchSelect, direction: 'asc' | 'desc' = 'asc'): DispatchSelect {
  return qb.orderBy('created_at', direction).orderBy('queue_seq', direction).orderBy('id', direction);
}

/**
 * Durable dispatch state. Every status change is one conditional UPDATE (compare-and-swap on the expected status, and
 * attempt when given), so of many concurrent callers exactly one wins, across connections and processes. Which edges
 * exist is the pipeline's rule (dispatch-transitions.ts); the store runs the swap it is handed.
 */
export class DispatchStore {
  #db: Kysely<Database>;
  /** Set on a view for one node (see `ownedBy`): status changes and updates touch only that node's dispatches. */
  readonly #owner: string | undefined;

  constructor(db: Kysely<Database>, owner?: string) {
    this.#db = db;
    this.#owner = owner;
  }

  /**
   * The same store as seen by the node `node` running its dispatches in a cluster: `compareAndSwap`, `update` and `touch`
   * change a dispatch only while its `node` is `node`. A node declared lost whose dispatch was released (node cleared)
   * or taken by another node can no longer move it, even before it learns that it was declared lost.
   */
  ownedBy(node: string): DispatchStore {
    return new DispatchStore(this.#db, node);
  }

  /** `qb` limited to this view's owner's dispatches (all of them on an unowned store). */
  #owned<Q extends { where: (column: 'node', op: '=', value: string) => Q }>(qb: Q): Q {
    return this.#owner === undefined ? qb : qb.where('node', '=', this.#owner);
  }

  /**
   * Inserts a new dispatch as `queued` at the back of the queue. While the issue has an active dispatch, nothing is
   * inserted and that dispatch is returned with `created: false` (the unique index decides, so a race has one winner).
   */
  async insert(input: NewDispatch): Promise<{ record: DispatchRecord; created: boolean }> {
    const row = await this.#db
      .insertInto('linear_dispatches')
      .values((eb) => ({
        id: input.id,
        issue_id: input.issueId,
        identifier: input.identifier,
        title: input.title,
        agent_session_id: input.agentSessionId,
        status: 'queued',
        tier: input.tier,
        tier_reason: input.tierReason,
        harness: input.harness,
        model: input.model,
        audit_harness: input.auditHarness,
        audit_model: input.auditModel,
        profile: input.profile,
        repo_path: input.repoPath,
        branch: input.branch,
        context: JSON.stringify(input.context),
        queue_seq: nextQueueSeq(eb),
        created_at: input.createdAt,
        updated_at: input.createdAt,
        last_activity_at: input.createdAt,
      }))
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return { record: dispatchOf(row), created: true };
    const active = await this.activeForIssue(input.issueId);
    if (!active) throw new Error(`dispatch ${input.id} could not be inserted: its id is taken`);
    return { record: active, created: false };
  }

  /** A dispatch by id. */
  async get(id: string): Promise<DispatchRecord | null> {
    const row = await this.#db.selectFrom('linear_dispatches').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /** The dispatch in progress for an issue, if any. */
  async activeForIssue(issueId: string): Promise<DispatchRecord | null> {
    const row = await this.#db
      .selectFrom('linear_dispatches')
      .selectAll()
      .where('issue_id', '=', issueId)
      .where('status', 'in', ACTIVE_DISPATCH_STATUSES)
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /** The newest dispatch linked to a Linear agent session (ties: the later queue seq, then id), if any. */
  async latestForAgentSession(agentSessionId: string): Promise<DispatchRecord | null> {
    return this.#newest((qb) => qb.where('agent_session_id', '=', agentSessionId));
  }

  /** The newest dispatch of an issue (by id or identifier; ties: the later queue seq, then id), if any. */
  async latestForIssue(ref: string): Promise<DispatchRecord | null> {
    return this.#newest((qb) => qb.where((eb) => eb.or([eb('issue_id', '=', ref), eb('identifier', '=', ref)])));
  }

  /** The newest dispatch `filter` keeps, in arrival order (see byArrival), if any. */
  async #newest(filter: (qb: DispatchSelect) => DispatchSelect): Promise<DispatchRecord | null> {
    const row = await byArrival(filter(this.#db.selectFrom('linear_dispatches').selectAll()), 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /** Dispatches, oldest first (ties in arrival order: queue seq, then id), optionally filtered by status. */
  async list(statuses?: readonly DispatchStatus[]): Promise<DispatchRecord[]> {
    if (statuses?.length === 0) return [];
    const rows = await byArrival(
      this.#db
        .selectFrom('linear_dispatches')
        .selectAll()
        .$if(statuses !== undefined, (qb) => qb.where('status', 'in', statuses ?? [])),
    ).execute();
    return rows.map(dispatchOf);
  }

  /**
   * Moves a dispatch from one of `from` to `to` in one conditional UPDATE, optionally only at the expected attempt.
   * Resolves to the new record, or null when the row was not in an expected state (another caller won). Entering
   * `queued` puts it at the back of the queue; entering a finished status sets `completedAt`. The edge itself is the
   * caller's to check (transitionDispatch).
   */
  async compareAndSwap(
    id: string,
    from: DispatchStatus | readonly DispatchStatus[],
    to: DispatchStatus,
    now: number,
    options: { attempt?: number; patch?: DispatchPatch } = {},
  ): Promise<DispatchRecord | null> {
    const froms: readonly DispatchStatus[] = typeof from === 'string' ? [from] : from;
    const { attempt } = options;
    const row = await this.#db
      .updateTable('linear_dispatches')
      .set((eb) => ({
        status: to,
        updated_at: now,
        ...(to === 'queued' ? { queue_seq: nextQueueSeq(eb), completed_at: null } : {}),
        ...(FINISHED_DISPATCH_STATUSES.includes(to) ? { completed_at: now } : {}),
        ...patchColumns(options.patch ?? {}),
      }))
      .where('id', '=', id)
      .where('status', 'in', froms)
      .$if(attempt !== undefined, (qb) => qb.where('attempt', '=', attempt ?? 0))
      .$call((qb) => this.#owned(qb))
      .returningAll()
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /**
   * Takes a slot for the oldest queued dispatch when fewer than `cap` dispatches hold one: queued → dispatched in
   * one statement (so two callers never both take the last slot). On PostgreSQL the cap is cluster-wide: the nodes'
   * claims are serialized by a transaction-scoped advisory lock, so each counts the slots after the one before
   * committed (READ COMMITTED alone would let a claim count from a snapshot older than another node's claim). A
   * claimant with an `incarnation` claims only while its node is up under it. Returns the dispatch, or null when none
   * moved.
   */
  async claimNextQueued(cap: number, now: number, claimant?: Claimant): Promise<DispatchRecord | null> {
    if (!isShared(this.#db) && !claimant?.incarnation) return this.#claimNextQueued(this.#db, cap, now, claimant);
    return this.#db.transaction().execute(async (trx) => {
      // The node's row first, then the claim lock (the same order in every claim, so no two claims wait on each other).
      if (!(await mayClaim(trx, claimant))) return null;
      if (isShared(trx)) await sql`SELECT pg_advisory_xact_lock(${DISPATCH_CLAIM_LOCK})`.execute(trx);
      return this.#claimNextQueued(trx, cap, now, claimant);
    });
  }

  async #claimNextQueued(
    db: Kysely<Database>,
    cap: number,
    now: number,
    claimant: Claimant | undefined,
  ): Promise<DispatchRecord | null> {
    const row = await db
      .updateTable('linear_dispatches')
      .set({ status: 'dispatched', updated_at: now, last_activity_at: now, node: claimant?.node ?? null })
      .where('status', '=', 'queued')
      .where((eb) =>
        eb.and([
          eb(
            'id',
            '=',
            eb
              .selectFrom('linear_dispatches')
              .select('id')
              .where('status', '=', 'queued')
              .$if(claimant !== undefined, (qb) => qb.where((w) => runnableBy(w, claimant as Claimant)))
              .orderBy('queue_seq')
              .orderBy('id')
              .limit(1),
          ),
          eb(
            eb
              .selectFrom('linear_dispatches')
              .select((sub) => sub.fn.countAll().as('n'))
              .where('status', 'in', SLOT_STATUSES),
            '<',
            cap,
          ),
        ]),
      )
      .returningAll()
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /**
   * Releases the unfinished dispatches a lost node owned (those holding a slot): their node is cleared (a
   * compare-and-swap on the node, so a second takeover releases nothing) and they keep their status and slot, for a
   * node that can run them to take (claimReleased). Returns the released dispatches.
   */
  async releaseNode(node: string, now: number): Promise<DispatchRecord[]> {
    const rows = await this.#db
      .updateTable('linear_dispatches')
      .set({ node: null, updated_at: now })
      .where('node', '=', node)
      .where('status', 'in', SLOT_STATUSES)
      .returningAll()
      .execute();
    return rows.map(dispatchOf);
  }

  /**
   * Takes the oldest released dispatch (holding a slot, no node) that `claimant` can run: its node is set in one
   * conditional UPDATE, so of the nodes asking at once exactly one gets it; fenced like claimNextQueued. Returns it,
   * or null when none is left (or the node may not claim).
   */
  async claimReleased(claimant: Claimant, now: number): Promise<DispatchRecord | null> {
    if (!claimant.incarnation) return this.#claimReleased(this.#db, claimant, now);
    return this.#db
      .transaction()
      .execute(async (trx) => ((await mayClaim(trx, claimant)) ? this.#claimReleased(trx, claimant, now) : null));
  }

  async #claimReleased(db: Kysely<Database>, claimant: Claimant, now: number): Promise<DispatchRecord | null> {
    const row = await db
      .updateTable('linear_dispatches')
      .set({ node: claimant.node, updated_at: now, last_activity_at: now })
      .where('node', 'is', null)
      .where('status', 'in', SLOT_STATUSES)
      .where((eb) =>
        eb(
          'id',
          '=',
          byArrival(
            eb
              .selectFrom('linear_dispatches')
              .selectAll()
              .where('node', 'is', null)
              .where('status', 'in', SLOT_STATUSES)
              .where((w) => runnableBy(w, claimant)),
          )
            .clearSelect()
            .select('id')
            .limit(1),
        ),
      )
      .returningAll()
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /** 1-based position of a queued dispatch in the queue, or null when it is not queued. */
  async queuePosition(id: string): Promise<number | null> {
    const row = await this.#db
      .selectFrom('linear_dispatches as d')
      .select((eb) =>
        eb
          .selectFrom('linear_dispatches as q')
          .select((sub) => sub.fn.countAll().as('n'))
          .where('q.status', '=', 'queued')
          .whereRef('q.queue_seq', '<=', 'd.queue_seq')
          .as('pos'),
      )
      .where('d.id', '=', id)
      .where('d.status', '=', 'queued')
      .executeTakeFirst();
    return row ? Number(row.pos) : null;
  }

  /** Updates fields that are not the status (worktree path, context, activity time). Returns the new record. */
  async update(id: string, patch: DispatchPatch, now: number): Promise<DispatchRecord | null> {
    const row = await this.#db
      .updateTable('linear_dispatches')
      .set({ updated_at: now, ...patchColumns(patch) })
      .where('id', '=', id)
      .$call((qb) => this.#owned(qb))
      .returningAll()
      .executeTakeFirst();
    return row ? dispatchOf(row) : null;
  }

  /** Records activity on a dispatch (the monitor marks dispatches without any for `staleAfterSec` as stuck). */
  async touch(id: string, now: number): Promise<void> {
    await this.#db
      .updateTable('linear_dispatches')
      .set({ last_activity_at: now })
      .where('id', '=', id)
      .where('last_activity_at', '<', now)
      .$call((qb) => this.#owned(qb))
      .execute();
  }

  /** Deletes finished dispatches (and their session map) completed before `before`. Returns how many. */
  async prune(before: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('linear_dispatches')
      .where('status', 'in', FINISHED_DISPATCH_STATUSES)
      .where('completed_at', '<', before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
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

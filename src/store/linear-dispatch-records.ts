// The dispatch rows themselves: the insert (one active dispatch per issue), the lookups and the list, the status
// compare-and-swap, the updates of other fields, activity and pruning. A view for one node changes only that node's
// dispatches.
import type { Kysely } from 'kysely';
import type { DispatchSelect } from './linear-dispatch-rows.ts';
import { byArrival, dispatchOf, nextQueueSeq, patchColumns } from './linear-dispatch-rows.ts';
import type { DispatchPatch, DispatchRecord, DispatchStatus, NewDispatch } from './linear-dispatch-types.ts';
import { ACTIVE_DISPATCH_STATUSES, FINISHED_DISPATCH_STATUSES } from './linear-dispatch-types.ts';
import type { Database } from './tables/index.ts';

/**
 * Durable dispatch rows. Every status change is one conditional UPDATE (compare-and-swap on the expected status, and
 * attempt when given), so of many concurrent callers exactly one wins, across connections and processes.
 */
export class DispatchRecordStore {
  readonly #db: Kysely<Database>;
  /** Set on a view for one node (see DispatchStore.ownedBy): status changes and updates touch only its dispatches. */
  readonly #owner: string | undefined;

  /** `owner`, when given, limits compareAndSwap, update and touch to the dispatches whose `node` is `owner`. */
  constructor(db: Kysely<Database>, owner?: string) {
    this.#db = db;
    this.#owner = owner;
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
}

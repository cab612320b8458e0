// Durable idempotency of the Linear event router: claims (the first path to take a comment, a prompt or an issue
// event owns it; the others stand down) and assignments (the Issue webhook and the AppUserNotification of one
// assignment, paired so that only one of them dispatches).
import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/** Which webhook reported an assignment. */
export type AssignmentSource = 'issue' | 'notification';

/** The outcome of recording an assignment event. */
export type AssignmentClaim =
  /** The first report of this assignment: dispatch it. */
  | { kind: 'new'; seq: number; agentSessionId: string | null }
  /** The same delivery again (after a crash or retry): carry on with what it started. */
  | { kind: 'redelivery'; seq: number; agentSessionId: string | null; paired: boolean }
  /** The other webhook already reported this assignment: nothing to do. */
  | { kind: 'paired'; seq: number; pairedWith: number };

/** Claims and assignment pairs, in the daemon's database (migration 460). */
export class LinearClaimStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Claims `key` for `owner`. Resolves true when the key is now (or already was) this owner's; false when another owner
   * holds it. The same owner claiming again (a redelivery) gets true.
   */
  async claim(key: string, owner: string, now: number): Promise<boolean> {
    await this.#db
      .insertInto('linear_claims')
      .values({ key, owner, created_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    return (await this.owner(key)) === owner;
  }

  /** Who holds `key`, or null. */
  async owner(key: string): Promise<string | null> {
    const row = await this.#db.selectFrom('linear_claims').select('owner').where('key', '=', key).executeTakeFirst();
    return row?.owner ?? null;
  }

  /** Gives a claim up (its work could not be taken over). */
  async release(key: string, owner: string): Promise<void> {
    await this.#db.deleteFrom('linear_claims').where('key', '=', key).where('owner', '=', owner).execute();
  }

  /**
   * Records that `source` reported the assignment of `issueId` to the app (delivery `deliveryId`). Within `windowMs`
   * of an unpaired report from the other source, the two are one assignment (`paired`). All in one transaction.
   */
  async recordAssignment(input: {
    issueId: string;
    source: AssignmentSource;
    deliveryId: string;
    now: number;
    windowMs: number;
  }): Promise<AssignmentClaim> {
    return this.#db.transaction().execute(async (trx): Promise<AssignmentClaim> => {
      const same = await trx
        .selectFrom('linear_assignments')
        .selectAll()
        .where('delivery_id', '=', input.deliveryId)
        .executeTakeFirst();
      if (same)
        return {
          kind: 'redelivery',
          seq: same.seq,
          agentSessionId: same.agent_session_id,
          paired: same.paired_with !== null,
        };
      const other = await trx
        .selectFrom('linear_assignments as a')
        .select('a.seq')
        .where('a.issue_id', '=', input.issueId)
        .where('a.source', '<>', input.source)
        .where('a.created_at', '>=', input.now - input.windowMs)
        .where('a.paired_with', 'is', null)
        .where((eb) =>
          eb.not(
            eb.exists(eb.selectFrom('linear_assignments as b').select('b.seq').whereRef('b.paired_with', '=', 'a.seq')),
          ),
        )
        .orderBy('a.seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      const inserted = await trx
        .insertInto('linear_assignments')
        .values({
          issue_id: input.issueId,
          source: input.source,
          delivery_id: input.deliveryId,
          paired_with: other?.seq ?? null,
          created_at: input.now,
        })
        .returning('seq')
        .executeTakeFirstOrThrow();
      if (other) return { kind: 'paired', seq: inserted.seq, pairedWith: other.seq };
      return { kind: 'new', seq: inserted.seq, agentSessionId: null };
    });
  }

  /** Remembers the agent session created for an assignment (a redelivery reuses it). */
  async setAssignmentSession(seq: number, agentSessionId: string): Promise<void> {
    await this.#db
      .updateTable('linear_assignments')
      .set({ agent_session_id: agentSessionId })
      .where('seq', '=', seq)
      .execute();
  }

  /** Deletes claims and assignments older than `before` (one transaction); resolves how many rows went. */
  async prune(before: number): Promise<number> {
    return this.#db.transaction().execute(async (trx) => {
      const a = await trx.deleteFrom('linear_claims').where('created_at', '<', before).executeTakeFirst();
      const b = await trx.deleteFrom('linear_assignments').where('created_at', '<', before).executeTakeFirst();
      return Number(a.numDeletedRows) + Number(b.numDeletedRows);
    });
  }
}

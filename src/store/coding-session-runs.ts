// The runs of coding sessions (session_runs): each launch or resume opens one, its cost is recorded after each turn and
// its end once, runs a crash left open are closed, and the metrics aggregate them all. Runs outlive their sessions'
// eviction, so the metrics count every run ever made.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { HarnessName } from '../core/config.ts';
import { roundUsd } from '../core/usd.ts';
import type { SessionStatus, StoredSession } from './coding-session-types.ts';
import { ACTIVE_STATUSES } from './coding-session-types.ts';
import { HotStatements } from './hot-statements.ts';
import { isShared } from './shared-store.ts';
import type { Database } from './tables/index.ts';
import { WriteOrder } from './write-order.ts';

/** Aggregates over every run, running ones included (runs survive eviction of the sessions themselves). */
export interface SessionMetrics {
  totalCostUsd: number;
  costPerDay: Record<string, number>;
  sessionsByStatus: Record<'completed' | 'failed' | 'killed' | 'interrupted' | 'running', number>;
  totalLaunched: number;
  averageDurationMs: number;
  mostExpensive: { id: string; name: string; costUsd: number; prompt: string } | null;
}

/** Day buckets of the per-day cost: epoch milliseconds divided in SQL (integer division on both databases). */
const MS_PER_DAY = 86_400_000;
const runDay = sql<number>`coalesce(ended_at, started_at) / 86400000`;

/** Persistence of the runs of coding sessions and the metrics over them. */
export class SessionRunStore {
  readonly #db: Kysely<Database>;
  /** The hot-path statements of runs (a start per launch, a cost per turn, an end per run), compiled once. */
  readonly #hot = new HotStatements();
  /** The cost and end writes of each run in the order asked for (a turn's cost must not land after a later one's). */
  readonly #order: WriteOrder<number>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#order = new WriteOrder(isShared(db));
  }

  /**
   * Records the start of a run (a launch or a resume); `within`: inside that transaction (the launch's insert).
   * Resolves with the run id.
   */
  async startRun(
    session: StoredSession,
    kind: 'launch' | 'resume',
    at: number,
    within?: Kysely<Database>,
  ): Promise<number> {
    const db = within ?? this.#db;
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
    await this.#order.run(runId, async () => {
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
    await this.#order.run(runId, async () => {
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
}

import type { Kysely } from 'kysely';
import type { Database } from './tables/index.ts';

/** Who holds a lease. */
export interface LeaseHolder {
  node: string;
  incarnation: string;
}

/**
 * The `cluster_leases` table: a named singleton (a chat poller, the cron clock) is served by the node holding its
 * lease. A lease is taken when it is free or expired and kept by renewing it before it expires; each is one statement
 * (`INSERT … ON CONFLICT DO UPDATE … WHERE`), so two nodes racing for it never both win.
 */
export class LeaseStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * Takes or renews lease `name` for `holder` until `expiresAt`; true when `holder` holds it now. It is taken from
   * another holder only once that holder's lease expired (`expires_at <= now`).
   */
  async acquire(name: string, holder: LeaseHolder, now: number, expiresAt: number): Promise<boolean> {
    const rows = await this.#db
      .insertInto('cluster_leases')
      .values({ name, holder: holder.node, incarnation: holder.incarnation, expires_at: expiresAt, acquired_at: now })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet((eb) => ({
            holder: eb.ref('excluded.holder'),
            incarnation: eb.ref('excluded.incarnation'),
            expires_at: eb.ref('excluded.expires_at'),
            acquired_at: eb
              .case()
              .when('cluster_leases.incarnation', '=', holder.incarnation)
              .then(eb.ref('cluster_leases.acquired_at'))
              .else(eb.ref('excluded.acquired_at'))
              .end(),
          }))
          .where((eb) =>
            eb.or([
              eb('cluster_leases.incarnation', '=', holder.incarnation),
              eb('cluster_leases.expires_at', '<=', now),
            ]),
          ),
      )
      .returning('incarnation')
      .execute();
    return rows.length > 0 && rows[0]?.incarnation === holder.incarnation;
  }

  /** Gives a lease up (a clean stop), so another node takes it without waiting for it to expire. */
  async release(name: string, holder: LeaseHolder): Promise<void> {
    await this.#db
      .deleteFrom('cluster_leases')
      .where('name', '=', name)
      .where('incarnation', '=', holder.incarnation)
      .execute();
  }

  /**
   * Ends every lease of a node declared down (or of its earlier runs: all but `except`, this run's incarnation), so
   * the others take them at once.
   */
  async releaseAllOf(node: string, except?: string): Promise<number> {
    let query = this.#db.deleteFrom('cluster_leases').where('holder', '=', node);
    if (except !== undefined) query = query.where('incarnation', '!=', except);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Who holds each lease now, by lease name. */
  async holders(now: number): Promise<Map<string, LeaseHolder>> {
    const rows = await this.#db.selectFrom('cluster_leases').selectAll().where('expires_at', '>', now).execute();
    return new Map(rows.map((r) => [r.name, { node: r.holder, incarnation: r.incarnation }]));
  }
}

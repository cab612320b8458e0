import type { Kysely, Selectable } from 'kysely';
import type { Database } from './tables/index.ts';

/** The OAuth tokens of one Linear workspace installation. Never log this object. */
export interface StoredLinearTokens {
  profile: string;
  accessToken: string;
  refreshToken: string | null;
  tokenType: string;
  scope: string;
  /** Epoch ms; null when Linear gave no expiry. */
  expiresAt: number | null;
  appUserId: string | null;
  appUserName: string | null;
  organizationId: string | null;
  organizationName: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What a token endpoint answer changes. */
export interface TokenGrant {
  accessToken: string;
  /** A rotated refresh token; null keeps the stored one. */
  refreshToken: string | null;
  tokenType: string;
  scope: string;
  expiresAt: number | null;
}

/** Why a callback `state` was refused. */
export type StateCheck = 'ok' | 'unknown' | 'expired' | 'reused';

type TokenRow = Selectable<Database['linear_oauth_tokens']>;

function toTokens(row: TokenRow): StoredLinearTokens {
  return {
    profile: row.profile,
    accessToken: row.access_token,
    refreshToken: row.refresh_token,
    tokenType: row.token_type,
    scope: row.scope,
    expiresAt: row.expires_at,
    appUserId: row.app_user_id,
    appUserName: row.app_user_name,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Persistence of Linear OAuth tokens (one row per profile) and of authorize `state` values (CSRF). */
export class LinearOAuthStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** The stored tokens of `profile`, or undefined when the workspace was never connected. */
  async tokens(profile = 'default'): Promise<StoredLinearTokens | undefined> {
    const row = await this.#db
      .selectFrom('linear_oauth_tokens')
      .selectAll()
      .where('profile', '=', profile)
      .executeTakeFirst();
    return row ? toTokens(row) : undefined;
  }

  /**
   * Stores the result of a code exchange (replacing any earlier installation of `profile`) together with who the
   * token acts as. One statement, so the access and refresh tokens are never stored apart.
   */
  async saveInstall(
    profile: string,
    grant: TokenGrant,
    identity: {
      appUserId: string | null;
      appUserName: string | null;
      organizationId: string | null;
      organizationName: string | null;
    },
    now: number,
  ): Promise<void> {
    await this.#db
      .insertInto('linear_oauth_tokens')
      .values({
        profile,
        access_token: grant.accessToken,
        refresh_token: grant.refreshToken,
        token_type: grant.tokenType,
        scope: grant.scope,
        expires_at: grant.expiresAt,
        app_user_id: identity.appUserId,
        app_user_name: identity.appUserName,
        organization_id: identity.organizationId,
        organization_name: identity.organizationName,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('profile').doUpdateSet((eb) => ({
          access_token: eb.ref('excluded.access_token'),
          refresh_token: eb.ref('excluded.refresh_token'),
          token_type: eb.ref('excluded.token_type'),
          scope: eb.ref('excluded.scope'),
          expires_at: eb.ref('excluded.expires_at'),
          app_user_id: eb.ref('excluded.app_user_id'),
          app_user_name: eb.ref('excluded.app_user_name'),
          organization_id: eb.ref('excluded.organization_id'),
          organization_name: eb.ref('excluded.organization_name'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }

  /**
   * Stores a refreshed grant in one statement: the new access token, its expiry and the rotated refresh token (the old
   * one is kept only when Linear sent none). Resolves the row as stored; throws when the profile has no tokens.
   */
  async saveRefresh(profile: string, grant: TokenGrant, now: number): Promise<StoredLinearTokens> {
    const row = await this.#db
      .updateTable('linear_oauth_tokens')
      .set({
        access_token: grant.accessToken,
        ...(grant.refreshToken === null ? {} : { refresh_token: grant.refreshToken }),
        token_type: grant.tokenType,
        scope: grant.scope,
        expires_at: grant.expiresAt,
        updated_at: now,
      })
      .where('profile', '=', profile)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new Error(`no Linear OAuth tokens stored for profile ${profile}`);
    return toTokens(row);
  }

  /** Records who the stored token acts as (learned after the fact, e.g. from `viewer`). */
  async saveIdentity(profile: string, appUserId: string, appUserName: string, now: number): Promise<void> {
    await this.#db
      .updateTable('linear_oauth_tokens')
      .set({ app_user_id: appUserId, app_user_name: appUserName, updated_at: now })
      .where('profile', '=', profile)
      .execute();
  }

  /** Forgets the tokens of `profile`; true when there were any. */
  async deleteTokens(profile = 'default'): Promise<boolean> {
    const result = await this.#db.deleteFrom('linear_oauth_tokens').where('profile', '=', profile).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Records a freshly issued authorize `state`, valid until `expiresAt`; expired states are pruned on the way. */
  async addState(state: string, redirectUri: string, now: number, expiresAt: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('linear_oauth_states')
        .where('expires_at', '<', now - 86_400_000)
        .execute();
      await trx
        .insertInto('linear_oauth_states')
        .values({ state, redirect_uri: redirectUri, created_at: now, expires_at: expiresAt })
        .execute();
    });
  }

  /**
   * Consumes `state` exactly once: 'ok' the first time it is presented before its expiry, otherwise why not. The mark is
   * one conditional UPDATE (compare-and-swap on `consumed_at IS NULL`), so two concurrent callbacks cannot both get 'ok'.
   */
  async consumeState(state: string, now: number): Promise<{ check: StateCheck; redirectUri?: string }> {
    return this.#db.transaction().execute(async (trx): Promise<{ check: StateCheck; redirectUri?: string }> => {
      // Mark it consumed even when expired, so an expired state can never become usable.
      const marked = await trx
        .updateTable('linear_oauth_states')
        .set({ consumed_at: now })
        .where('state', '=', state)
        .where('consumed_at', 'is', null)
        .returning(['redirect_uri', 'expires_at'])
        .executeTakeFirst();
      if (!marked) {
        const known = await trx
          .selectFrom('linear_oauth_states')
          .select('state')
          .where('state', '=', state)
          .executeTakeFirst();
        return { check: known ? 'reused' : 'unknown' };
      }
      if (marked.expires_at <= now) return { check: 'expired' };
      return { check: 'ok', redirectUri: marked.redirect_uri };
    });
  }

  /** Records how the callback carrying `state` ended ('connected' or an error message), for a waiting CLI. */
  async setStateOutcome(state: string, outcome: string): Promise<void> {
    await this.#db.updateTable('linear_oauth_states').set({ outcome }).where('state', '=', state).execute();
  }

  /** The outcome recorded for `state`; undefined while its callback has not finished. */
  async stateOutcome(state: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('linear_oauth_states')
      .select('outcome')
      .where('state', '=', state)
      .executeTakeFirst();
    return row?.outcome ?? undefined;
  }
}

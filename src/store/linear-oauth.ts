import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './database.ts';

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

interface TokenRow {
  profile: string;
  access_token: string;
  refresh_token: string | null;
  token_type: string;
  scope: string;
  expires_at: number | null;
  app_user_id: string | null;
  app_user_name: string | null;
  organization_id: string | null;
  organization_name: string | null;
  created_at: number;
  updated_at: number;
}

function fromRow(row: TokenRow): StoredLinearTokens {
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

/** SQLite persistence of Linear OAuth tokens (one row per profile) and of authorize `state` values (CSRF). */
export class LinearOAuthStore {
  #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** The stored tokens of `profile`, or undefined when the workspace was never connected. */
  tokens(profile = 'default'): StoredLinearTokens | undefined {
    const row = this.#db.prepare('SELECT * FROM linear_oauth_tokens WHERE profile = ?').get(profile) as TokenRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /**
   * Stores the result of a code exchange (replacing any earlier installation of `profile`) together with who the
   * token acts as. One statement, so the access and refresh tokens are never stored apart.
   */
  saveInstall(profile: string, grant: TokenGrant, identity: { appUserId: string | null; appUserName: string | null; organizationId: string | null; organizationName: string | null }, now: number): void {
    this.#db
      .prepare(
        `INSERT INTO linear_oauth_tokens (profile, access_token, refresh_token, token_type, scope, expires_at, app_user_id,
           app_user_name, organization_id, organization_name, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(profile) DO UPDATE SET access_token = excluded.access_token, refresh_token = excluded.refresh_token,
           token_type = excluded.token_type, scope = excluded.scope, expires_at = excluded.expires_at,
           app_user_id = excluded.app_user_id, app_user_name = excluded.app_user_name,
           organization_id = excluded.organization_id, organization_name = excluded.organization_name,
           updated_at = excluded.updated_at`,
      )
      .run(
        profile,
        grant.accessToken,
        grant.refreshToken,
        grant.tokenType,
        grant.scope,
        grant.expiresAt,
        identity.appUserId,
        identity.appUserName,
        identity.organizationId,
        identity.organizationName,
        now,
        now,
      );
  }

  /**
   * Stores a refreshed grant in one transaction: the new access token, its expiry and the rotated refresh token (the
   * old one is kept only when Linear sent none). Returns the row as stored; throws when the profile has no tokens.
   */
  saveRefresh(profile: string, grant: TokenGrant, now: number): StoredLinearTokens {
    return transaction(this.#db, () => {
      const result = this.#db
        .prepare(
          `UPDATE linear_oauth_tokens SET access_token = ?, refresh_token = COALESCE(?, refresh_token), token_type = ?,
             scope = ?, expires_at = ?, updated_at = ? WHERE profile = ?`,
        )
        .run(grant.accessToken, grant.refreshToken, grant.tokenType, grant.scope, grant.expiresAt, now, profile);
      if (Number(result.changes) !== 1) throw new Error(`no Linear OAuth tokens stored for profile ${profile}`);
      return fromRow(this.#db.prepare('SELECT * FROM linear_oauth_tokens WHERE profile = ?').get(profile) as unknown as TokenRow);
    });
  }

  /** Records who the stored token acts as (learned after the fact, e.g. from `viewer`). */
  saveIdentity(profile: string, appUserId: string, appUserName: string, now: number): void {
    this.#db
      .prepare('UPDATE linear_oauth_tokens SET app_user_id = ?, app_user_name = ?, updated_at = ? WHERE profile = ?')
      .run(appUserId, appUserName, now, profile);
  }

  /** Forgets the tokens of `profile`; true when there were any. */
  deleteTokens(profile = 'default'): boolean {
    return Number(this.#db.prepare('DELETE FROM linear_oauth_tokens WHERE profile = ?').run(profile).changes) > 0;
  }

  /** Records a freshly issued authorize `state`, valid until `expiresAt`; expired states are pruned on the way. */
  addState(state: string, redirectUri: string, now: number, expiresAt: number): void {
    transaction(this.#db, () => {
      this.#db.prepare('DELETE FROM linear_oauth_states WHERE expires_at < ?').run(now - 86_400_000);
      this.#db
        .prepare('INSERT INTO linear_oauth_states (state, redirect_uri, created_at, expires_at) VALUES (?, ?, ?, ?)')
        .run(state, redirectUri, now, expiresAt);
    });
  }

  /**
   * Consumes `state` exactly once: 'ok' the first time it is presented before its expiry, otherwise why not. The check
   * and the mark are one conditional UPDATE, so two concurrent callbacks cannot both get 'ok'.
   */
  consumeState(state: string, now: number): { check: StateCheck; redirectUri?: string } {
    return transaction(this.#db, () => {
      const row = this.#db.prepare('SELECT redirect_uri, expires_at, consumed_at FROM linear_oauth_states WHERE state = ?').get(state) as
        | { redirect_uri: string; expires_at: number; consumed_at: number | null }
        | undefined;
      if (!row) return { check: 'unknown' as const };
      if (row.consumed_at !== null) return { check: 'reused' as const };
      // Mark it consumed even when expired, so an expired state can never become usable.
      this.#db.prepare('UPDATE linear_oauth_states SET consumed_at = ? WHERE state = ? AND consumed_at IS NULL').run(now, state);
      if (row.expires_at <= now) return { check: 'expired' as const };
      return { check: 'ok' as const, redirectUri: row.redirect_uri };
    });
  }

  /** Records how the callback carrying `state` ended ('connected' or an error message), for a waiting CLI. */
  setStateOutcome(state: string, outcome: string): void {
    this.#db.prepare('UPDATE linear_oauth_states SET outcome = ? WHERE state = ?').run(outcome, state);
  }

  /** The outcome recorded for `state`; undefined while its callback has not finished. */
  stateOutcome(state: string): string | undefined {
    const row = this.#db.prepare('SELECT outcome FROM linear_oauth_states WHERE state = ?').get(state) as { outcome: string | null } | undefined;
    return row?.outcome ?? undefined;
  }
}

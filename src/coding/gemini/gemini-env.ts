// Environment fixes the Gemini CLI (0.61) needs before a run.
//
// Base-URL override: with GOOGLE_GEMINI_BASE_URL set and no auth type in the settings, the CLI picks auth type "gateway",
// which non-interactive mode rejects ("Invalid auth method selected.", exit 41). The verified workaround is
// `~/.gemini/settings.json` containing {"security":{"auth":{"selectedType":"gemini-api-key"}}} plus GEMINI_API_KEY; the
// base URL is still taken from the environment. `ensureGatewayAuthSettings` writes that key — and only that key — into the
// user's settings when a run sets GOOGLE_GEMINI_BASE_URL and the settings select no auth type. It never overwrites an auth
// type the user chose and never rewrites a file it cannot parse (settings may hold comments).
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { makePrivateDirs, writePrivateFile } from '../../core/private-files.ts';

/** The auth type that makes the CLI use GEMINI_API_KEY against GOOGLE_GEMINI_BASE_URL. */
export const GATEWAY_AUTH_TYPE = 'gemini-api-key';

/** Disables the CLI's relaunch-in-a-child process: its parent ignores SIGTERM, so a stop would never reach the agent. */
export const NO_RELAUNCH_ENV = { GEMINI_CLI_NO_RELAUNCH: 'true' } as const;

/** The CLI's home for a run's environment: GEMINI_CLI_HOME, else HOME, else the daemon's home directory. */
export function geminiHomeFor(env: Record<string, string | undefined>): string {
  return env.GEMINI_CLI_HOME || env.HOME || homedir();
}

/** The user settings file under a home directory (`<home>/.gemini/settings.json`). */
export function geminiSettingsPath(home: string): string {
  return join(home, '.gemini', 'settings.json');
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The auth type a settings object selects (`security.auth.selectedType`, or the legacy top-level `selectedAuthType`). */
export function selectedAuthType(settings: Json): string | undefined {
  const security = settings.security;
  const auth = isObject(security) ? security.auth : undefined;
  const selected = isObject(auth) ? auth.selectedType : undefined;
  if (typeof selected === 'string' && selected) return selected;
  const legacy = settings.selectedAuthType;
  return typeof legacy === 'string' && legacy ? legacy : undefined;
}

/**
 * Pure: the settings file contents (JSON text) to write for the base-URL workaround, given the current contents (undefined
 * when there is no file). Returns undefined when nothing must change (an auth type is already selected). Throws when the
 * current contents are not a JSON object (they are then left alone).
 */
export function gatewaySettingsContents(current: string | undefined): string | undefined {
  let settings: Json = {};
  if (current !== undefined && current.trim()) {
    const parsed: unknown = JSON.parse(current);
    if (!isObject(parsed)) throw new Error('the settings file is not a JSON object');
    settings = parsed;
  }
  if (selectedAuthType(settings)) return undefined;
  const security = isObject(settings.security) ? settings.security : {};
  const auth = isObject(security.auth) ? security.auth : {};
  const merged = { ...settings, security: { ...security, auth: { ...auth, selectedType: GATEWAY_AUTH_TYPE } } };
  return `${JSON.stringify(merged, null, 2)}\n`;
}

/** What `ensureGatewayAuthSettings` did. */
export type GatewayAuthResult =
  | { action: 'not-needed' }
  | { action: 'kept'; path: string; authType: string }
  | { action: 'written'; path: string }
  | { action: 'skipped'; path: string; reason: string };

/**
 * Before a run: when `env` sets GOOGLE_GEMINI_BASE_URL and the user settings select no auth type, merges
 * `security.auth.selectedType = "gemini-api-key"` into `<home>/.gemini/settings.json` (creating it, mode 0600, if absent;
 * keeping an existing file's mode; written to a temp file and renamed). Returns what it did; an unreadable or unparsable
 * settings file is reported as `skipped` with the reason, never overwritten. Throws only if the write itself fails.
 */
export function ensureGatewayAuthSettings(env: Record<string, string | undefined>): GatewayAuthResult {
  if (!env.GOOGLE_GEMINI_BASE_URL) return { action: 'not-needed' };
  const path = geminiSettingsPath(geminiHomeFor(env));
  let current: string | undefined;
  try {
    current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  } catch (error) {
    return {
      action: 'skipped',
      path,
      reason: `cannot read it: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  let next: string | undefined;
  try {
    next = gatewaySettingsContents(current);
  } catch (error) {
    return {
      action: 'skipped',
      path,
      reason: `cannot parse it as JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  if (next === undefined)
    return { action: 'kept', path, authType: selectedAuthType(JSON.parse(current ?? '{}') as Json) ?? '' };
  const mode = current !== undefined ? statSync(path).mode & 0o777 : 0o600;
  makePrivateDirs(dirname(path));
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writePrivateFile(temp, next, mode);
  renameSync(temp, path);
  return { action: 'written', path };
}

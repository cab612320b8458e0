// Where each agent CLI finds its credentials, in one place: `doctor` checks them, and a session that fails for want of
// them says what is missing and where to put it. Facts (agent-clis.md): Claude Code takes ANTHROPIC_API_KEY (or a
// token) or its own login in ~/.claude/.credentials.json (CLAUDE_CONFIG_DIR moves it); Codex takes OPENAI_API_KEY, a
// custom provider's env key, or its login in $CODEX_HOME/auth.json (default ~/.codex); Gemini CLI takes GEMINI_API_KEY.
// The environment that decides is the agent's: the daemon's environment with harnesses.<name>.env over it.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { HarnessName } from '../core/config.ts';

/** An agent's environment (the daemon's with harnesses.<name>.env merged over it). */
export type AgentEnv = Readonly<Record<string, string | undefined>>;

/** Where a harness's credentials were found, or that none were. */
export type CredentialStatus =
  | { found: true; harness: HarnessName; source: { kind: 'env'; variable: string } | { kind: 'login'; path: string } }
  | { found: false; harness: HarnessName; hint: string };

/** What decides where Codex looks: a configured provider's API-key variable (harnesses.codex.provider.envKey). */
export interface CredentialOptions {
  codexProviderEnvKey?: string;
}

const CLAUDE_KEYS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'] as const;
const CODEX_KEYS = ['OPENAI_API_KEY', 'CODEX_API_KEY'] as const;
const GEMINI_KEYS = ['GEMINI_API_KEY'] as const;

/** Messages with which the agent CLIs say they have no usable credentials. */
const AUTH_FAILURE =
  /not logged in|please run \/login|invalid api key|authentication_failed|unauthorized|\b401\b|auth method|api key not (set|found|valid)|OPENAI_API_KEY|GEMINI_API_KEY/i;

/** The home directory the agent CLI sees. */
function homeOf(env: AgentEnv): string {
  return env.HOME || homedir();
}

/** Claude Code's login file: $CLAUDE_CONFIG_DIR/.credentials.json, else ~/.claude/.credentials.json. */
export function claudeLoginPath(env: AgentEnv): string {
  return join(env.CLAUDE_CONFIG_DIR || join(homeOf(env), '.claude'), '.credentials.json');
}

/** Codex's login file: $CODEX_HOME/auth.json, else ~/.codex/auth.json. */
export function codexLoginPath(env: AgentEnv): string {
  return join(env.CODEX_HOME || join(homeOf(env), '.codex'), 'auth.json');
}

function firstSet(env: AgentEnv, keys: readonly string[]): string | undefined {
  return keys.find((k) => (env[k] ?? '').trim().length > 0);
}

/** How to give a harness its credentials, as one sentence naming the config key. */
export function credentialHint(harness: HarnessName, options: CredentialOptions = {}): string {
  switch (harness) {
    case 'claude':
      return (
        'set ANTHROPIC_API_KEY in harnesses.claude.env (config: "harnesses": {"claude": {"env": {"ANTHROPIC_API_KEY": "…"}}}) ' +
        "or in the daemon's environment, or log in to Claude Code as the daemon's user (run `claude`, then /login; it keeps the login in ~/.claude/.credentials.json)"
      );
    case 'codex':
      return options.codexProviderEnvKey
        ? `set ${options.codexProviderEnvKey} (the key of harnesses.codex.provider) in harnesses.codex.env or in the daemon's environment`
        : 'set OPENAI_API_KEY in harnesses.codex.env (config: "harnesses": {"codex": {"env": {"OPENAI_API_KEY": "…"}}}) ' +
            "or in the daemon's environment, or log in to Codex as the daemon's user (`codex login`; it keeps the login in ~/.codex/auth.json)";
    case 'gemini':
      return 'set GEMINI_API_KEY in harnesses.gemini.env (config: "harnesses": {"gemini": {"env": {"GEMINI_API_KEY": "…"}}}) or in the daemon\'s environment';
  }
}

/** Whether a harness has credentials in `env` (or a login file where its CLI keeps it), and if not, where to put them. */
export function checkCredentials(
  harness: HarnessName,
  env: AgentEnv,
  options: CredentialOptions = {},
): CredentialStatus {
  const missing: CredentialStatus = { found: false, harness, hint: credentialHint(harness, options) };
  switch (harness) {
    case 'claude': {
      const variable = firstSet(env, CLAUDE_KEYS);
      if (variable) return { found: true, harness, source: { kind: 'env', variable } };
      const path = claudeLoginPath(env);
      return existsSync(path) ? { found: true, harness, source: { kind: 'login', path } } : missing;
    }
    case 'codex': {
      if (options.codexProviderEnvKey) {
        const variable = firstSet(env, [options.codexProviderEnvKey]);
        return variable ? { found: true, harness, source: { kind: 'env', variable } } : missing;
      }
      const variable = firstSet(env, CODEX_KEYS);
      if (variable) return { found: true, harness, source: { kind: 'env', variable } };
      const path = codexLoginPath(env);
      return existsSync(path) ? { found: true, harness, source: { kind: 'login', path } } : missing;
    }
    case 'gemini': {
      const variable = firstSet(env, GEMINI_KEYS);
      return variable ? { found: true, harness, source: { kind: 'env', variable } } : missing;
    }
  }
}

/** True when an agent's error says it has no usable credentials ("Not logged in · Please run /login", a 401, …). */
export function isCredentialFailure(message: string): boolean {
  return AUTH_FAILURE.test(message);
}

/** The error a failed session records: the agent's own, plus where its credentials go when it failed for want of them. */
export function explainCredentialFailure(harness: HarnessName, message: string): string {
  if (!isCredentialFailure(message)) return message;
  return `${message} — the ${harness} agent has no usable credentials: ${credentialHint(harness)}`;
}

import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';
import { telegramKey } from '../channels/telegram/telegram-keys.ts';
import { resolveBotToken } from '../channels/telegram/telegram-token.ts';
import { createHarnesses } from '../coding/harnesses.ts';
import type { Config } from '../core/config.ts';
import { accountsOf } from '../core/config-accounts.ts';
import { loadConfig } from '../core/config-load.ts';
import { errorMessage } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { makePrivateDirs } from '../core/private-files.ts';
import { createInference } from '../inference/inference.ts';
import { requireLinearSecrets } from '../linear/api/credentials.ts';
import { openDatabase } from '../store/database.ts';
import { resolveConnection } from './client.ts';
import { configModeChecks } from './doctor-config-mode.ts';
import { credentialChecks } from './doctor-credentials.ts';
import { discordChecks } from './doctor-discord.ts';
import { githubChecks } from './doctor-github.ts';
import { signalChecks } from './doctor-signal.ts';
import { slackChecks } from './doctor-slack.ts';
import { serviceCheck } from './service-check.ts';

/** One line of the doctor's report. */
export interface Check {
  status: 'ok' | 'warn' | 'fail';
  label: string;
  detail: string;
}

const ICON = { ok: '✔', warn: '⚠', fail: '✖' } as const;

function nodeCheck(): Check {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > 22 || (major === 22 && minor >= 13);
  return ok
    ? { status: 'ok', label: 'Node.js', detail: `v${process.versions.node}` }
    : {
        status: 'fail',
        label: 'Node.js',
        detail: `v${process.versions.node}; switchboard needs >= 22.13 (run it through npm so the pinned Node 24 is used)`,
      };
}

function homeCheck(home: string): Check {
  try {
    makePrivateDirs(home);
    accessSync(home, constants.W_OK);
    return { status: 'ok', label: 'State directory', detail: home };
  } catch (error) {
    return { status: 'fail', label: 'State directory', detail: `${home}: ${errorMessage(error)}` };
  }
}

function storeCheck(home: string): Check {
  const path = join(home, 'state.db');
  if (!existsSync(path)) return { status: 'ok', label: 'Store', detail: `${path} (created on first start)` };
  try {
    const db = openDatabase(path);
    const row = db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number };
    db.close();
    return { status: 'ok', label: 'Store', detail: `${path} (SQLite, ${row.n} schema steps applied)` };
  } catch (error) {
    return { status: 'fail', label: 'Store', detail: `${path}: ${errorMessage(error)}` };
  }
}

/** Whether the orchestrator can reach a model: the providers resolve (keys present), or none is configured. */
function inferenceCheck(config: Config, env: NodeJS.ProcessEnv): Check {
  const providers = config.inference.providers;
  if (providers.length === 0) {
    return {
      status: 'warn',
      label: 'Inference',
      detail:
        'no provider configured: the orchestrator answers "No inference provider available." (chat commands still work); add inference.providers',
    };
  }
  try {
    createInference(config.inference, silentLogger(), { env });
    return {
      status: 'ok',
      label: 'Inference',
      detail: providers.map((p) => `${p.id ?? p.kind} (${p.model})`).join(' → '),
    };
  } catch (error) {
    return { status: 'fail', label: 'Inference', detail: errorMessage(error) };
  }
}

/** The chat and Linear integrations that are switched on: their secrets are there, someone may talk to the bot. */
function integrationChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [];
  const telegram = config.channels.telegram;
  if (telegram.enabled) {
    for (const { account, config: bot } of accountsOf(telegram)) {
      const label = account === undefined ? 'Telegram' : `Telegram (${account})`;
      try {
        resolveBotToken(bot, env, account);
        checks.push(
          bot.allowedUserIds.length > 0
            ? { status: 'ok', label, detail: `bot token present; ${bot.allowedUserIds.length} allowed user(s)` }
            : {
                status: 'warn',
                label,
                detail: `${telegramKey(account, 'allowedUserIds')} is empty: the bot refuses everyone`,
              },
        );
      } catch (error) {
        checks.push({ status: 'fail', label, detail: errorMessage(error) });
      }
    }
  }
  checks.push(...slackChecks(config, env));
  checks.push(...discordChecks(config, env));
  checks.push(...githubChecks(config, env));
  if (config.linear.enabled) {
    try {
      requireLinearSecrets(config.linear, env);
      checks.push({
        status: 'ok',
        label: 'Linear',
        detail: `webhook signing secret present; API at ${config.linear.apiUrl}`,
      });
    } catch (error) {
      checks.push({ status: 'fail', label: 'Linear', detail: errorMessage(error) });
    }
  }
  return checks;
}

function workspaceChecks(config: Config): Check[] {
  return config.workspaces.map((root) =>
    existsSync(root)
      ? { status: 'ok', label: 'Workspace', detail: root }
      : { status: 'warn', label: 'Workspace', detail: `${root} does not exist` },
  );
}

function rootCheck(config: Config): Check | null {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || config.permissionMode !== 'bypassPermissions' || config.harnesses.claude.env.IS_SANDBOX) return null;
  return {
    status: 'warn',
    label: 'Claude as root',
    detail:
      'Claude Code refuses permissionMode bypassPermissions under root. Inside a sandbox or container set harnesses.claude.env.IS_SANDBOX to "1"; otherwise run as a normal user or choose another permissionMode.',
  };
}

async function daemonCheck(home: string, env: NodeJS.ProcessEnv): Promise<Check> {
  const conn = resolveConnection({ home, env });
  try {
    // The details (version, sessions) are for the gateway token's holder only.
    const headers: Record<string, string> = conn.token ? { authorization: `Bearer ${conn.token}` } : {};
    const response = await fetch(`${conn.url}/healthz`, { headers, signal: AbortSignal.timeout(2_000) });
    const body = (await response.json()) as { version?: string; activeSessions?: number };
    if (body.version === undefined) {
      return {
        status: 'warn',
        label: 'Daemon',
        detail: `running at ${conn.url}, but it did not accept this gateway token (SWITCHBOARD_TOKEN or <home>/gateway.token)`,
      };
    }
    return {
      status: 'ok',
      label: 'Daemon',
      detail: `running at ${conn.url} (v${body.version}, ${body.activeSessions} active sessions)`,
    };
  } catch {
    return { status: 'ok', label: 'Daemon', detail: `not running at ${conn.url} (start it with npm start)` };
  }
}

/** Runs every check: Node, config, state directory, store, workspaces, the three agent executables, the daemon. */
export async function runDoctor(options: { home?: string; env: NodeJS.ProcessEnv }): Promise<Check[]> {
  const checks: Check[] = [nodeCheck()];
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({ env: options.env, ...(options.home ? { home: options.home } : {}) });
    checks.push({
      status: 'ok',
      label: 'Config',
      detail: loaded.configFileFound ? loaded.configPath : `${loaded.configPath} (not present: defaults)`,
    });
    checks.push(...configModeChecks(loaded.configPath, loaded.configFileFound));
  } catch (error) {
    checks.push({ status: 'fail', label: 'Config', detail: errorMessage(error) });
    return checks;
  }
  const { config, home } = loaded;
  checks.push(
    homeCheck(home),
    storeCheck(home),
    ...workspaceChecks(config),
    inferenceCheck(config, options.env),
    ...integrationChecks(config, options.env),
    ...(await signalChecks(config.channels.signal)),
  );
  const harnesses = createHarnesses(config, silentLogger());
  for (const harness of Object.values(harnesses)) {
    const result = await harness.check();
    checks.push({
      status: result.ok ? 'ok' : 'fail',
      label: `Harness ${harness.name}`,
      detail: result.ok
        ? `${result.executable}${result.version ? ` (${result.version})` : ''}`
        : `${result.executable}: ${result.problem ?? 'not usable'}`,
    });
  }
  checks.push(...credentialChecks(config, options.env));
  const root = rootCheck(config);
  if (root) checks.push(root);
  checks.push(serviceCheck(options.env));
  checks.push(await daemonCheck(home, options.env));
  return checks;
}

/** Formats the report, one check per line. */
export function formatChecks(checks: Check[]): string {
  return checks.map((c) => `${ICON[c.status]} ${c.label}: ${c.detail}`).join('\n');
}

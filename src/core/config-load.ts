import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import JSON5 from 'json5';
import type { Config } from './config.ts';
import { configSchema } from './config.ts';
import { setPath, sourceOf, sourcesUnder } from './config-paths.ts';
import { errorMessage, invalidInput } from './errors.ts';

/** Environment variables the loader reads for itself rather than as config keys. */
const RESERVED_ENV = new Set([
  'SWITCHBOARD_HOME',
  'SWITCHBOARD_CONFIG',
  'SWITCHBOARD_TOKEN',
  'SWITCHBOARD_URL',
  'SWITCHBOARD_FAULT',
]);

/** Short aliases for the keys people set most. */
const ENV_ALIASES: Record<string, string> = {
  SWITCHBOARD_PORT: 'gateway.port',
  SWITCHBOARD_HOST: 'gateway.host',
  SWITCHBOARD_LOG_LEVEL: 'log.level',
};

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** State directory; default `$SWITCHBOARD_HOME` or `~/.switchboard`. */
  home?: string;
  /** Config file; default `$SWITCHBOARD_CONFIG` or `<home>/config.json5`. */
  configPath?: string;
  /** Dotted-path overrides from CLI flags, applied last (e.g. `{"gateway.port": 0}`). */
  overrides?: Record<string, unknown>;
}

export interface LoadedConfig {
  config: Config;
  home: string;
  configPath: string;
  configFileFound: boolean;
}

/** Returns the state directory: explicit, then `$SWITCHBOARD_HOME`, then `~/.switchboard`. */
export function resolveHome(env: NodeJS.ProcessEnv = process.env, explicit?: string): string {
  const chosen = explicit ?? env.SWITCHBOARD_HOME;
  return chosen ? resolve(expandHome(chosen)) : join(homedir(), '.switchboard');
}

/** Expands a leading `~` to the user's home directory. */
export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/** Converts `MAX_SESSIONS` to `maxSessions`. */
function camel(segment: string): string {
  return segment.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Parses an env/flag value: JSON5 when it parses (numbers, booleans, arrays, objects), else the raw string. */
export function parseScalar(raw: string): unknown {
  try {
    return JSON5.parse(raw);
  } catch {
    return raw;
  }
}

/** Maps `SWITCHBOARD_*` variables to dotted config paths (`__` separates nesting levels). */
export function envOverrides(env: NodeJS.ProcessEnv): Map<string, { value: unknown; source: string }> {
  const out = new Map<string, { value: unknown; source: string }>();
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('SWITCHBOARD_') || RESERVED_ENV.has(name) || raw === undefined) continue;
    const path = Object.hasOwn(ENV_ALIASES, name)
      ? (ENV_ALIASES[name] as string)
      : name.slice('SWITCHBOARD_'.length).split('__').map(camel).join('.');
    out.set(path, { value: parseScalar(raw), source: name });
  }
  return out;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw invalidInput(`cannot read config file ${path}: ${errorMessage(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON5.parse(text);
  } catch (error) {
    throw invalidInput(`config file ${path} is not valid JSON5: ${errorMessage(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidInput(`config file ${path} must hold an object`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * The lines for keys zod did not recognise under `parent`, each blamed on where it came from: an unknown
 * `SWITCHBOARD_*` variable is named as such, a `--set` key as the command line's; the rest keep zod's wording and are
 * blamed on the config file.
 */
function unknownKeyLines(
  parent: string,
  message: string,
  keys: readonly string[],
  sources: ReadonlyMap<string, string>,
  fileOrDefaults: string,
): string[] {
  const lines: string[] = [];
  const fromFile: string[] = [];
  for (const key of keys) {
    const path = parent ? `${parent}.${key}` : key;
    const origins = sourcesUnder(sources, path);
    const variables = origins.filter((origin) => origin.startsWith('SWITCHBOARD_'));
    if (variables.length > 0)
      lines.push(`unknown environment variable ${variables.join(', ')}: there is no config key "${path}"`);
    else if (origins.length > 0) lines.push(`${path}: unknown config key [from ${origins.join(', ')}]`);
    else fromFile.push(key);
  }
  if (fromFile.length > 0)
    lines.push(`${parent || '(root)'}: ${message} (${fromFile.join(', ')}) [from ${fileOrDefaults}]`);
  return lines;
}

/**
 * Loads the configuration: the JSON5 file, then `SWITCHBOARD_*` env vars, then CLI overrides, validated by zod.
 * Throws an invalid_input AppError naming the key, the reason and where the value came from.
 */
export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const home = resolveHome(env, options.home);
  const configPath = resolve(expandHome(options.configPath ?? env.SWITCHBOARD_CONFIG ?? join(home, 'config.json5')));
  const configFileFound = existsSync(configPath);
  const raw: Record<string, unknown> = configFileFound ? readConfigFile(configPath) : {};
  const sources = new Map<string, string>();
  for (const [path, { value, source }] of envOverrides(env)) {
    setPath(raw, path, value, source);
    sources.set(path, source);
  }
  for (const [path, value] of Object.entries(options.overrides ?? {})) {
    setPath(raw, path, value, 'command line');
    sources.set(path, 'command line');
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const fileOrDefaults = configFileFound ? configPath : 'defaults';
    const lines = result.error.issues.flatMap((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys')
        return unknownKeyLines(path, issue.message, issue.keys, sources, fileOrDefaults);
      return [`${path || '(root)'}: ${issue.message} [from ${sourceOf(sources, path) ?? fileOrDefaults}]`];
    });
    throw invalidInput(
      `invalid configuration: ${lines.join('; ')}`,
      result.error.issues[0]?.path.map(String).join('.'),
    );
  }
  return { config: normalizePaths(result.data), home, configPath, configFileFound };
}

/** A path from the config, `~` expanded and made absolute (a relative one against the daemon's working directory). */
function absolute(path: string): string {
  return resolve(expandHome(path));
}

/**
 * Every directory the config names, made absolute once at load: a launch refuses a relative workdir (whoever asked
 * could not know what it is relative to), and the config's own are read against the daemon's working directory.
 */
function normalizePaths(config: Config): Config {
  const workspaces = (config.workspaces.length > 0 ? config.workspaces : [homedir()]).map(absolute);
  const agentChannels = Object.fromEntries(
    Object.entries(config.agentChannels).map(([dir, ch]) => [absolute(dir), ch]),
  );
  const { pipeline, codeRun } = config.linear;
  return {
    ...config,
    workspaces,
    agentChannels,
    ...(config.defaultWorkdir ? { defaultWorkdir: absolute(config.defaultWorkdir) } : {}),
    linear: {
      ...config.linear,
      pipeline: {
        ...pipeline,
        ...(pipeline.repo ? { repo: absolute(pipeline.repo) } : {}),
        ...(pipeline.worktreeDir ? { worktreeDir: absolute(pipeline.worktreeDir) } : {}),
        teamRepos: Object.fromEntries(Object.entries(pipeline.teamRepos).map(([team, repo]) => [team, absolute(repo)])),
      },
      codeRun: { ...codeRun, ...(codeRun.workdir ? { workdir: absolute(codeRun.workdir) } : {}) },
    },
  };
}

import type { LoadedConfig } from '../core/config-load.ts';
import { envOverrides } from '../core/config-load.ts';

/** Which command-line flag sets a config key, for messages that say how to change it. */
export const KEY_FLAGS: Readonly<Record<string, string>> = {
  'gateway.port': '--port',
  'gateway.host': '--host',
  'log.level': '--log-level',
};

/**
 * Where a config key's value came from, in the words of the person who set it: the flag, the environment variable,
 * the config file, or the default.
 */
export function keyOrigin(
  key: string,
  loaded: LoadedConfig,
  overrides: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): string {
  if (key in overrides) return `the command line (${KEY_FLAGS[key] ?? `--set ${key}=…`})`;
  const fromEnv = envOverrides(env).get(key);
  if (fromEnv) return `the environment (${fromEnv.source})`;
  return loaded.configFileFound ? loaded.configPath : 'the default';
}

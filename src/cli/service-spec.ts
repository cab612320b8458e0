import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expandHome, resolveHome } from '../core/config-load.ts';
import { CliError } from './cli-error.ts';

/** What the always-on service runs: which Node, which entry point, where, with which environment. */
export interface ServiceSpec {
  /** Absolute path of the Node that runs the daemon (the one running this command: the pinned Node 24). */
  node: string;
  /** The program's arguments after Node: the CLI entry point and `start`. */
  args: string[];
  /** The switchboard folder. */
  workingDirectory: string;
  /** SWITCHBOARD_HOME, SWITCHBOARD_CONFIG when one was chosen, PATH (to find the agents), the SWITCHBOARD_* settings in effect and the variables asked for with --env. */
  env: Record<string, string>;
  /** The state directory the daemon will use. */
  home: string;
  /** Where launchd writes the daemon's output (systemd sends it to the journal). */
  logFile: string;
}

/** Variables that are not daemon settings (the CLI's own, the crash-test knob) and stay out of the service; home and config are set explicitly. */
const NOT_CARRIED = new Set([
  'SWITCHBOARD_TOKEN',
  'SWITCHBOARD_URL',
  'SWITCHBOARD_HOME',
  'SWITCHBOARD_CONFIG',
  'SWITCHBOARD_FAULT',
]);

/** The entry point the service runs (this folder's src/cli/main.ts). */
const ENTRY = fileURLToPath(new URL('./main.ts', import.meta.url));

/** What the service is built from: this environment, --home, --config, --env, and (for tests) Node and the entry point. */
export interface SpecOptions {
  env: NodeJS.ProcessEnv;
  home?: string;
  config?: string;
  /** Names of variables to carry from this environment into the service (e.g. an API key a provider reads). */
  passEnv?: string[];
  /** Default: `process.execPath`. */
  node?: string;
  /** Default: this folder's src/cli/main.ts. */
  entry?: string;
}

/** Builds the service from the current home, config and environment. */
export function serviceSpec(options: SpecOptions): ServiceSpec {
  const { env } = options;
  const home = resolveHome(env, options.home);
  const entry = options.entry ?? ENTRY;
  const serviceEnv: Record<string, string> = { SWITCHBOARD_HOME: home };
  const config = options.config ?? env.SWITCHBOARD_CONFIG;
  if (config !== undefined) serviceEnv.SWITCHBOARD_CONFIG = resolve(expandHome(config));
  if (env.PATH !== undefined) serviceEnv.PATH = env.PATH;
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('SWITCHBOARD_') && !NOT_CARRIED.has(name) && value !== undefined) serviceEnv[name] = value;
  }
  for (const name of options.passEnv ?? []) {
    const value = env[name];
    if (value === undefined) throw new CliError(`--env ${name}: that variable is not set here`, 2);
    serviceEnv[name] = value;
  }
  for (const [name, value] of Object.entries(serviceEnv)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new CliError(`--env ${name}: not a variable name`, 2);
    if (/[\n\r\0]/.test(value)) throw new CliError(`${name}: a service cannot carry a value with a line break`, 2);
  }
  const node = options.node ?? process.execPath;
  if (!isAbsolute(node)) throw new CliError(`the Node path ${node} is not absolute`, 1);
  return {
    node,
    args: [entry, 'start'],
    workingDirectory: resolve(entry, '..', '..', '..'),
    env: serviceEnv,
    home,
    logFile: resolve(home, 'daemon.log'),
  };
}

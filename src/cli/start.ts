import { loadConfig, parseScalar } from '../core/config-load.ts';
import type { Daemon } from '../main.ts';
import { startDaemon } from '../main.ts';
import { CliError } from './cli-error.ts';
import { portInUseError, preflightGateway } from './gateway-preflight.ts';

export interface StartOptions {
  home?: string;
  config?: string;
  port?: string;
  host?: string;
  logLevel?: string;
  set?: string[];
}

/**
 * Turns `start` flags into dotted config overrides; `--set key.path=value` may repeat. The result has no prototype, so
 * a key such as `__proto__` stays an entry of its own (and loadConfig refuses it by name).
 */
export function startOverrides(options: StartOptions): Record<string, unknown> {
  const overrides = Object.create(null) as Record<string, unknown>;
  if (options.port !== undefined) overrides['gateway.port'] = parseScalar(options.port);
  if (options.host !== undefined) overrides['gateway.host'] = options.host;
  if (options.logLevel !== undefined) overrides['log.level'] = options.logLevel;
  for (const pair of options.set ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`--set ${pair}: expected key=value (e.g. --set maxSessions=3)`, 2);
    overrides[pair.slice(0, eq)] = parseScalar(pair.slice(eq + 1));
  }
  return overrides;
}

/** `listen EADDRINUSE` from the daemon's own listen (when the port was taken after the preflight). */
function isAddressInUse(error: unknown): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
}

/**
 * Starts the daemon in this process and keeps it running until SIGINT/SIGTERM. The config is read and the gateway's
 * host and port are checked first, so a bad host or a taken port is refused before anything starts.
 */
export async function runStart(options: StartOptions, env: NodeJS.ProcessEnv): Promise<Daemon> {
  // The inference layer logs provider warnings itself (once per provider, through pino); the AI SDK's own stderr copy
  // would only duplicate them. This is the SDK's process-wide switch, set once by the process entry point.
  globalThis.AI_SDK_LOG_WARNINGS = false;
  const load = {
    env,
    overrides: startOverrides(options),
    ...(options.home ? { home: options.home } : {}),
    ...(options.config ? { configPath: options.config } : {}),
  };
  // The signals are taken before anything starts: one that arrives while the daemon is starting (its URL may already
  // be in daemon.json) stops it cleanly once it has started, instead of killing it halfway.
  const run: { daemon?: Daemon; pending?: string; stopping: boolean } = { stopping: false };
  const stop = (daemon: Daemon, signal: string): void => {
    daemon.logger.info({ signal }, 'stopping');
    void daemon.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  const shutdown = (signal: string): void => {
    if (run.stopping) return;
    run.stopping = true;
    if (run.daemon) stop(run.daemon, signal);
    else run.pending = signal;
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  const preflight = { loaded: loadConfig(load), overrides: load.overrides, env };
  await preflightGateway(preflight);
  let daemon: Daemon;
  try {
    daemon = await startDaemon(load);
  } catch (error) {
    if (isAddressInUse(error)) throw await portInUseError(preflight);
    throw error;
  }
  run.daemon = daemon;
  if (run.pending) stop(daemon, run.pending);
  return daemon;
}

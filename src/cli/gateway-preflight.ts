import { lookup } from 'node:dns/promises';
import { createServer, isIP } from 'node:net';
import type { LoadedConfig } from '../core/config-load.ts';
import { errorMessage } from '../core/errors.ts';
import { isLoopback } from '../core/loopback.ts';
import { CliError } from './cli-error.ts';
import { keyOrigin } from './config-origin.ts';
import { findPortHolder, portInUseMessage } from './port-in-use.ts';

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123). */
const HOSTNAME =
  /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** What went wrong with gateway.host, or null when it is a host name or an IP address. */
export function hostProblem(host: string): string | null {
  if (isIP(host) !== 0 || HOSTNAME.test(host)) return null;
  if (/^[a-z]+:\/\//i.test(host)) return 'expected a host name or IP address, not a URL';
  if (/^[^:]+:\d+$/.test(host) || /^\[.*\]:\d+$/.test(host))
    return 'expected a host name or IP address without a port (the port is gateway.port)';
  return 'not a host name or IP address (e.g. 127.0.0.1, ::1 or localhost)';
}

/** The arguments of one start: the loaded config, the flag overrides and the environment, to name where values came from. */
export interface PreflightInput {
  loaded: LoadedConfig;
  overrides: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
}

/** Binds host:port for a moment to see whether the daemon could; resolves with the error code when it could not. */
function probeBind(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/** The message when the daemon cannot listen because the port is taken (from the probe, or from the daemon's own listen). */
export async function portInUseError(input: PreflightInput): Promise<CliError> {
  const { loaded, overrides, env } = input;
  const { host, port } = loaded.config.gateway;
  const holder = await findPortHolder(host, port, loaded.home);
  const portOrigin = keyOrigin('gateway.port', loaded, overrides, env);
  return new CliError(
    portInUseMessage({ host, port, holder, home: loaded.home, configPath: loaded.configPath, portOrigin }),
    1,
  );
}

/**
 * Checks, before anything starts, that the daemon can listen where the config says: gateway.host is a host name or an
 * address of this machine (and loopback unless gateway.allowRemote), and gateway.port is free. Throws a CliError
 * naming the key, where its value came from, and the way to change it.
 */
export async function preflightGateway(input: PreflightInput): Promise<void> {
  const { loaded, overrides, env } = input;
  const { host, port, allowRemote } = loaded.config.gateway;
  const hostOrigin = (): string => keyOrigin('gateway.host', loaded, overrides, env);
  const problem = hostProblem(host);
  if (problem) throw new CliError(`gateway.host "${host}" (from ${hostOrigin()}): ${problem}`, 2);
  try {
    await lookup(host);
  } catch (error) {
    throw new CliError(
      `gateway.host "${host}" (from ${hostOrigin()}) does not resolve to an address: ${errorMessage(error)}`,
      2,
    );
  }
  if (!isLoopback(host) && !allowRemote) {
    throw new CliError(
      `gateway.host "${host}" (from ${hostOrigin()}) is reachable from other machines; set gateway.allowRemote to true to allow it, or use 127.0.0.1`,
      2,
    );
  }
  const failure = await probeBind(host, port);
  if (!failure) return;
  switch (failure.code) {
    case 'EADDRINUSE':
      throw await portInUseError(input);
    case 'EADDRNOTAVAIL':
      throw new CliError(`gateway.host "${host}" (from ${hostOrigin()}) is not an address of this machine`, 2);
    case 'EACCES':
      throw new CliError(
        `gateway.port ${port} (from ${keyOrigin('gateway.port', loaded, overrides, env)}) needs privileges this user lacks (ports below 1024); set gateway.port in ${loaded.configPath} or pass --port <n>`,
        1,
      );
    case undefined:
    default:
      throw new CliError(`cannot listen on ${host}:${port}: ${errorMessage(failure)}`, 1);
  }
}

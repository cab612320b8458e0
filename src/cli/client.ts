import { resolveHome } from '../core/config-load.ts';
import { isLoopback } from '../core/loopback.ts';
import { readDaemonInfo } from '../store/daemon-lock.ts';
import { readToken } from '../store/tokens.ts';
import { CliError } from './cli-error.ts';
import { daemonUrl } from './daemon-url.ts';

/** Where the daemon is and how to authenticate to it. */
export interface Connection {
  url: string;
  token: string | undefined;
  home: string;
  /**
   * The daemon runs on this machine: found through this home's daemon.json or the default address, or given a
   * loopback URL. Then a directory the command was typed in means the same to it.
   */
  local: boolean;
}

export interface ConnectionOptions {
  home?: string;
  url?: string;
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_URL = 'http://127.0.0.1:18789';
const START_HINT = 'Start it with `npm start` in the switchboard folder (or `npx switchboard start`).';

/** Finds the daemon: --url, $SWITCHBOARD_URL, the URL the daemon wrote to <home>/daemon.json, then the default port. */
export function resolveConnection(options: ConnectionOptions = {}): Connection {
  const env = options.env ?? process.env;
  const home = resolveHome(env, options.home);
  const given =
    options.url !== undefined
      ? daemonUrl(options.url, '--url')
      : env.SWITCHBOARD_URL !== undefined
        ? daemonUrl(env.SWITCHBOARD_URL, 'SWITCHBOARD_URL')
        : undefined;
  const url = given ?? readDaemonInfo(home)?.url ?? DEFAULT_URL;
  const local = given === undefined || isLoopback(new URL(given).hostname);
  return { url: url.replace(/\/+$/, ''), token: env.SWITCHBOARD_TOKEN ?? readToken(home), home, local };
}

const BAD_INPUT_KINDS = new Set(['invalid_input', 'not_found', 'conflict']);

interface RpcReply {
  result?: unknown;
  error?: { code: number; message: string; data?: { kind?: string } };
}

/** Sends HTTP to the daemon, turning "nothing is listening" into exit code 1 with the way to start it. */
export async function daemonFetch(conn: Connection, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (conn.token) headers.set('authorization', `Bearer ${conn.token}`);
  headers.set('x-switchboard-client', 'cli');
  try {
    return await fetch(`${conn.url}${path}`, { ...init, headers });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new CliError(`switchboard daemon is not running (no answer at ${conn.url}: ${cause}). ${START_HINT}`, 1);
  }
}

/** Calls one JSON-RPC method on the daemon and returns its result; daemon errors become CliErrors. */
export async function rpcCall(conn: Connection, method: string, params: Record<string, unknown>): Promise<unknown> {
  const response = await daemonFetch(conn, '/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  if (response.status === 401) {
    throw new CliError(
      `the daemon at ${conn.url} refused the token (check ${conn.home}/gateway.token or SWITCHBOARD_TOKEN)`,
      1,
    );
  }
  let reply: RpcReply;
  try {
    reply = (await response.json()) as RpcReply;
  } catch {
    throw new CliError(`unexpected answer from ${conn.url} (HTTP ${response.status})`, 1);
  }
  if (reply.error) {
    const kind = reply.error.data?.kind ?? '';
    throw new CliError(reply.error.message, BAD_INPUT_KINDS.has(kind) ? 2 : 1);
  }
  return reply.result;
}

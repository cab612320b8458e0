import { processAlive, readDaemonInfo } from '../store/daemon-lock.ts';

/** Who holds a port the daemon wanted. */
export type PortHolder = { kind: 'this-home'; pid: number } | { kind: 'switchboard' } | { kind: 'other' };

/** The address to reach a listener bound to `host` (a wildcard bind answers on loopback). */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Finds out who listens on host:port: the daemon of this state directory (daemon.json), another switchboard daemon (/healthz answers like one), or some other program. */
export async function findPortHolder(host: string, port: number, home: string, timeoutMs = 1_500): Promise<PortHolder> {
  const info = readDaemonInfo(home);
  if (info && info.port === port && processAlive(info.pid)) return { kind: 'this-home', pid: info.pid };
  try {
    const response = await fetch(`http://${reachableHost(host)}:${port}/healthz`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    // Without the token (another home's daemon has its own), /healthz says only that a switchboard daemon is alive.
    const body = (await response.json()) as { ok?: unknown; service?: unknown };
    if (body.ok === true && body.service === 'switchboard') return { kind: 'switchboard' };
  } catch {
    // Not HTTP, not JSON, or no answer in time: not a switchboard daemon.
  }
  return { kind: 'other' };
}

/** The message for `listen EADDRINUSE`: who holds the port, and which key or flag moves the daemon elsewhere. */
export function portInUseMessage(options: {
  host: string;
  port: number;
  holder: PortHolder;
  home: string;
  configPath: string;
  portOrigin: string;
}): string {
  const { host, port, holder, home, configPath, portOrigin } = options;
  const where = `port ${port} on ${host} (gateway.port, from ${portOrigin})`;
  let who: string;
  switch (holder.kind) {
    case 'this-home':
      // A second daemon on the same state directory is refused anyway: moving the port would not help.
      return `${where} is taken by the switchboard daemon of this state directory (pid ${holder.pid}, ${home}): it is already running, so use it, or stop it first (kill ${holder.pid}); a second daemon needs its own --home and port.`;
    case 'switchboard':
      who = 'is taken by another switchboard daemon (with another state directory)';
      break;
    case 'other':
      who = 'is taken by another program (not a switchboard daemon)';
      break;
    default: {
      const never: never = holder;
      throw new Error(`unknown port holder ${JSON.stringify(never)}`);
    }
  }
  return `${where} ${who}. To use another port set gateway.port in ${configPath} or pass --port <n> (--port 0 picks a free one).`;
}

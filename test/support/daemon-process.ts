// Starts the real daemon as a child process (`node src/cli/main.ts start`) on a temp state directory, for tests that
// need a real process to SIGKILL and restart. Waits until the daemon has written its URL to daemon.json.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** A daemon process started for a test. */
export interface DaemonProcess {
  child: ChildProcess;
  url: string;
  token: string;
  home: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Calls a JSON-RPC method and returns its result (throws with the error message on an RPC error). */
  rpc<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  /** Waits for the process to exit (after a kill). */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `switchboard start` with SWITCHBOARD_HOME=`home` and waits (up to `timeoutMs`) for it to listen. */
export async function startDaemonProcess(
  home: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 20_000,
): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [MAIN, 'start', '--port', '0'], {
    env: { ...process.env, ...env, SWITCHBOARD_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let exitedEarly = false;
  void exit.then(() => (exitedEarly = true));
  const deadline = Date.now() + timeoutMs;
  let url: string | undefined;
  while (Date.now() < deadline && !exitedEarly) {
    const file = join(home, 'daemon.json');
    if (existsSync(file)) {
      try {
        const info = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; url?: string };
        if (info.pid === child.pid && info.url) {
          url = info.url;
          break;
        }
      } catch {
        // being rewritten; read again
      }
    }
    await sleep(50);
  }
  if (!url) {
    child.kill('SIGKILL');
    throw new Error(`the daemon did not start within ${timeoutMs} ms:\n${output}`);
  }
  const token = readFileSync(join(home, 'gateway.token'), 'utf8').trim();
  const base = url;
  return {
    child,
    url: base,
    token,
    home,
    output: () => output,
    exited: () => exit,
    async rpc<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
      const response = await fetch(`${base}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      const reply = (await response.json()) as { result?: T; error?: { message: string } };
      if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
      return reply.result as T;
    },
  };
}

/** SIGKILLs a daemon process that has not exited yet and waits for its exit; nothing for none or one already gone. */
export async function killDaemonProcess(daemon: DaemonProcess | null | undefined): Promise<void> {
  if (!daemon || daemon.child.exitCode !== null || daemon.child.signalCode !== null) return;
  daemon.child.kill('SIGKILL');
  await daemon.exited();
}

// `switchboard linear connect`: print the authorize URL and wait for Linear to send the browser back — to a one-shot
// listener on the redirect URI when nothing listens there, else to the running daemon, which shares the store (the
// state is durable, so whichever process gets the callback validates it; the CLI watches the state's outcome).
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { Clock } from '../../core/clock.ts';
import { AppError, errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { LinearOAuthStore, StoredLinearTokens } from '../../store/linear-oauth.ts';
import type { LinearOAuth } from './oauth.ts';
import { handleOAuthCallback } from './oauth-callback.ts';
import { sleep } from './request-budget.ts';

export interface ConnectDeps {
  oauth: LinearOAuth;
  oauthStore: LinearOAuthStore;
  /** The redirect URI registered with the Linear app (defaultRedirectUri). */
  redirectUri: string;
  clock: Clock;
  logger: Logger;
  /** Where the authorize URL and progress lines go. */
  print: (line: string) => void;
  /** linear.oauth.connectTimeoutMs. */
  timeoutMs: number;
  /** How often the store is checked while the daemon handles the callback (default 500 ms). */
  pollIntervalMs?: number;
}

export interface ConnectResult {
  /** Who received the callback. */
  via: 'listener' | 'daemon';
  tokens: StoredLinearTokens;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Starts a one-shot HTTP listener for the callback path; undefined when the port is taken (the daemon is there). */
async function listenOnce(
  redirect: URL,
  oauth: LinearOAuth,
  logger: Logger,
  onDone: (ok: boolean, message: string) => void,
): Promise<Server | undefined> {
  if (redirect.protocol !== 'http:' || !LOOPBACK_HOSTS.has(redirect.hostname)) return undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', redirect.origin);
    if (req.method !== 'GET' || url.pathname !== redirect.pathname) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    void handleOAuthCallback(oauth, Object.fromEntries(url.searchParams), logger).then((page) => {
      res
        .writeHead(page.status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        .end(page.html);
      // A request with a foreign or stale state is refused and the wait goes on; only our own state ends it.
      const outcome = url.searchParams.get('state');
      if (outcome !== null) onDone(page.status === 200, page.status === 200 ? 'connected' : page.html);
    });
  });
  const port = Number(redirect.port || 80);
  const host = redirect.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolve(undefined) : reject(error),
    );
    server.listen(port, host, () => resolve(server));
  });
}

/**
 * Runs the OAuth installation from the command line: issues a state, prints the authorize URL, and waits for the
 * callback (one-shot listener, or the daemon via the shared store) up to `timeoutMs`. Returns the stored tokens;
 * throws an AppError when the callback fails or does not come.
 */
export async function linearConnect(deps: ConnectDeps): Promise<ConnectResult> {
  const { oauth, oauthStore, clock, print } = deps;
  const redirect = new URL(deps.redirectUri);
  let settle: (value: { ok: boolean; message: string }) => void = () => {};
  const finished = new Promise<{ ok: boolean; message: string }>((resolve) => (settle = resolve));
  const request = await oauth.authorize();
  const server = await listenOnce(redirect, oauth, deps.logger, (ok, message) => {
    if (ok) {
      settle({ ok, message });
      return;
    }
    // A failure settles once the store shows the outcome the callback recorded (read after its commit).
    void oauthStore.stateOutcome(request.state).then(
      (outcome) => outcome !== undefined && settle({ ok, message }),
      (error: unknown) => settle({ ok: false, message: errorMessage(error) }),
    );
  });
  const via = server ? 'listener' : 'daemon';
  print('Open this URL in a browser where you are signed in to Linear as a workspace admin, and approve the app:');
  print(request.url);
  print(
    server
      ? `Waiting for Linear to redirect to ${deps.redirectUri} …`
      : `Waiting for the switchboard daemon to receive the callback at ${deps.redirectUri} …`,
  );
  let timedOut = false;
  const deadline = clock.after(deps.timeoutMs, () => {
    timedOut = true;
    settle({ ok: false, message: 'timeout' });
  });
  try {
    if (!server) {
      // The daemon validates the state, exchanges the code and records the outcome on the state row.
      void (async () => {
        while (!timedOut) {
          const outcome = await oauthStore.stateOutcome(request.state);
          if (outcome !== undefined) {
            settle({ ok: outcome === 'connected', message: outcome });
            return;
          }
          await sleep(clock, deps.pollIntervalMs ?? 500);
        }
      })();
    }
    const result = await finished;
    if (!result.ok) {
      if (timedOut)
        throw new AppError(
          'unavailable',
          `no OAuth callback within ${Math.round(deps.timeoutMs / 1000)} s (linear.oauth.connectTimeoutMs); run \`switchboard linear connect\` again`,
        );
      const recorded = (await oauthStore.stateOutcome(request.state)) ?? result.message;
      throw new AppError('forbidden', `Linear connection failed: ${recorded.replace(/^failed: /, '')}`);
    }
    const tokens = await oauth.storedTokens();
    if (!tokens) throw new AppError('internal', 'the callback succeeded but no tokens are stored');
    return { via, tokens };
  } catch (error) {
    deps.logger.debug({ err: errorMessage(error) }, 'linear connect failed');
    throw error;
  } finally {
    deadline.cancel();
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    }
  }
}

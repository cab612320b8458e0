// `switchboard linear connect` and `switchboard linear status`: they work on the store directly (the daemon shares it),
// so they run whether or not the daemon is up.
import { join } from 'node:path';
import type { Command } from 'commander';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { loadConfig } from '../core/config-load.ts';
import { invalidInput } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { makePrivateDirs } from '../core/private-files.ts';
import type { LinearAccess } from '../linear/api/access.ts';
import { buildLinearAccess } from '../linear/api/access.ts';
import { linearConnect } from '../linear/api/connect.ts';
import { defaultRedirectUri } from '../linear/api/oauth.ts';
import { formatLinearStatus, linearStatus } from '../linear/api/status.ts';
import type { DatabaseSync } from '../store/database.ts';
import { openDatabase } from '../store/database.ts';
import { closeSqlite, sqliteKysely } from '../store/kysely/connection.ts';
import { LinearDeliveryStore } from '../store/linear-deliveries.ts';

/** What the `linear` commands need from their surroundings. */
export interface LinearCommandsIo {
  out: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Time for token expiry and the status's ages. */
  clock: Clock;
}

interface Context {
  access: LinearAccess;
  db: DatabaseSync;
  redirectUri: string;
  config: ReturnType<typeof loadConfig>['config'];
}

function open(program: Command, io: LinearCommandsIo): Context {
  const home = program.opts<{ home?: string }>().home;
  const loaded = loadConfig({ env: io.env, ...(home ? { home } : {}) });
  makePrivateDirs(loaded.home);
  const db = openDatabase(join(loaded.home, 'state.db'), { clock: io.clock });
  const { config } = loaded;
  const access = buildLinearAccess({
    config: config.linear,
    gateway: config.gateway,
    env: io.env,
    db: sqliteKysely(db),
    clock: io.clock,
    logger: silentLogger(),
  });
  return { access, db, config, redirectUri: defaultRedirectUri(config.linear.oauth, config.gateway) };
}

/** Adds `linear connect` and `linear status` to the program (global `--home` is read from it). */
export function addLinearCommands(program: Command, io: LinearCommandsIo): void {
  const linear = program.command('linear').description('Linear: connect the OAuth app, show which token is in use');

  linear
    .command('connect')
    .description('Install the Linear OAuth app (actor=app): prints the authorize URL and waits for the callback')
    .option('--timeout <seconds>', 'how long to wait for the browser (default linear.oauth.connectTimeoutMs)')
    .action(async (opts: { timeout?: string }) => {
      const ctx = open(program, io);
      try {
        const timeoutMs =
          opts.timeout !== undefined
            ? Math.round(Number(opts.timeout) * 1000)
            : ctx.config.linear.oauth.connectTimeoutMs;
        if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
          throw invalidInput('--timeout: expected a positive number of seconds', 'timeout');
        const { via, tokens } = await linearConnect({
          oauth: ctx.access.oauth,
          oauthStore: ctx.access.oauthStore,
          redirectUri: ctx.redirectUri,
          clock: systemClock(),
          logger: silentLogger(),
          print: io.out,
          timeoutMs,
        });
        const who = [
          tokens.organizationName && `to ${tokens.organizationName}`,
          tokens.appUserName && `as ${tokens.appUserName}`,
        ]
          .filter(Boolean)
          .join(' ');
        io.out(
          `Linear connected ${who} (callback received by the ${via === 'daemon' ? 'running daemon' : 'command line'}).`,
        );
      } finally {
        closeSqlite(ctx.db);
      }
    });

  linear
    .command('status')
    .description('Show the Linear token in use (source, expiry), the OAuth installation and the webhook queue')
    .option('--check', 'make one call to Linear to confirm the token works')
    .option('--json', 'print the status as JSON')
    .action(async (opts: { check?: boolean; json?: boolean }) => {
      const ctx = open(program, io);
      try {
        const status = await linearStatus(
          {
            config: ctx.config.linear,
            env: io.env,
            tokens: ctx.access.tokens,
            oauth: ctx.access.oauth,
            deliveries: new LinearDeliveryStore(sqliteKysely(ctx.db)),
            api: ctx.access.api,
          },
          { check: opts.check === true },
        );
        io.out(opts.json ? JSON.stringify(status, null, 2) : formatLinearStatus(status, io.clock.now()));
      } finally {
        closeSqlite(ctx.db);
      }
    });
}

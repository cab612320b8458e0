import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';

/** A real PostgreSQL server a test started on loopback, in a throw-away data folder. */
export interface TestPostgres {
  /** `postgres://` URL of its `switchboard` database (trust authentication, loopback only). */
  url: string;
  /** Stops the server and removes its data folder. */
  stop(): Promise<void>;
}

const SEARCH_ROOT = '/usr/lib/postgresql';

/**
 * The folder holding `initdb` and `postgres` (Debian's postgresql package puts them under /usr/lib/postgresql/<n>/bin),
 * or null when PostgreSQL is not installed.
 */
export function postgresBinDir(): string | null {
  if (!existsSync(SEARCH_ROOT)) return null;
  const versions = readdirSync(SEARCH_ROOT)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(SEARCH_ROOT, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin;
  }
  return null;
}

/**
 * `false` when the PostgreSQL tests can run, else why not (for node:test's `skip`). CI installs Debian's postgresql in
 * `.ci/run` and sets TEST_REQUIRE_POSTGRES=1, so there a missing server fails the test instead of skipping it.
 */
export function postgresSkip(): false | string {
  if (postgresBinDir() || process.env.TEST_REQUIRE_POSTGRES === '1') return false;
  return `PostgreSQL is not installed (apt-get install -y postgresql): ${SEARCH_ROOT}/<version>/bin/initdb not found`;
}

/** Runs a PostgreSQL program as `user` when the tests run as root (PostgreSQL refuses root), else as ourselves. */
function asServerUser(program: string, args: string[], user: string | null): [string, string[]] {
  return user ? ['runuser', ['-u', user, '--', program, ...args]] : [program, args];
}

/**
 * Starts a fresh PostgreSQL server: `initdb` into a temp folder, `pg_ctl start -w` on a free loopback port with fsync
 * off unless `durable` (a test database need not survive a power cut; a bench of commits needs it on), then creates the `switchboard` database. Resolves once the server
 * accepts connections (pg_ctl waits for the server's own ready status), not after a sleep.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(postgresSkip() || 'PostgreSQL is not installed');
  const user = process.getuid?.() === 0 ? 'postgres' : null;
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-pg-'));
  const data = join(dir, 'data');
  if (user) {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const [initdb, initArgs] = asServerUser(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'switchboard', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
    user,
  );
  execFileSync(initdb, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  // A bench measuring durable commits asks for `durable`: fsync and full-page writes on, as a production server runs.
  const durability = options.durable ? '' : ' -c fsync=off -c full_page_writes=off';
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${durability}`;
  const pgCtl = (args: string[]): void => {
    const [program, argv] = asServerUser(join(bin, 'pg_ctl'), ['-D', data, ...args], user);
    execFileSync(program, argv, { stdio: 'pipe' });
  };
  // -w: pg_ctl returns once the server accepts connections (it polls the server's own status file).
  pgCtl(['-l', join(dir, 'server.log'), '-o', serverOptions, '-w', 'start']);
  const createdb = asServerUser(
    join(bin, 'createdb'),
    ['-h', '127.0.0.1', '-p', String(port), '-U', 'switchboard', 'switchboard'],
    user,
  );
  execFileSync(createdb[0], createdb[1], { stdio: 'pipe' });
  return {
    url: `postgres://switchboard@127.0.0.1:${port}/switchboard`,
    async stop() {
      pgCtl(['-m', 'immediate', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// What scripts/ensure-install.mjs does: decide whether node_modules matches package-lock.json, and run a quiet
// `npm ci` when it does not. Plain JavaScript for whatever Node runs npm: on a fresh clone that is the system Node,
// not the pinned Node 24 this installs.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project folder (this script lives in <root>/scripts). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

function readPackages(file) {
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  return parsed && typeof parsed === 'object' && parsed.packages && typeof parsed.packages === 'object'
    ? parsed.packages
    : {};
}

/**
 * Compares package-lock.json with what npm last installed (node_modules/.package-lock.json, which npm writes after
 * every install). Returns { kind: 'fresh' }, { kind: 'missing', reason } or { kind: 'stale', reason }.
 */
export function installState(root) {
  const lockFile = join(root, 'package-lock.json');
  const installedFile = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(join(root, 'node_modules'))) return { kind: 'missing', reason: 'node_modules is missing' };
  if (!existsSync(installedFile))
    return { kind: 'stale', reason: 'node_modules was not installed by npm (no node_modules/.package-lock.json)' };
  const wanted = readPackages(lockFile);
  let installed;
  try {
    installed = readPackages(installedFile);
  } catch (error) {
    return { kind: 'stale', reason: `node_modules/.package-lock.json is unreadable (${error.message})` };
  }
  for (const [path, entry] of Object.entries(wanted)) {
    if (!path.startsWith('node_modules/')) continue;
    const have = installed[path];
    if (!have) {
      // Optional packages for other platforms (darwin-arm64 binaries on Linux…) are never installed.
      if (entry.optional) continue;
      return { kind: 'stale', reason: `${path.slice('node_modules/'.length)} is not installed` };
    }
    if (!entry.link && have.version !== entry.version) {
      return {
        kind: 'stale',
        reason: `${path.slice('node_modules/'.length)} is ${have.version}, package-lock.json wants ${entry.version}`,
      };
    }
  }
  // The pinned Node comes from the `node` package's install script: an install that skipped scripts lacks it.
  if (wanted['node_modules/node'] && !existsSync(join(root, 'node_modules', 'node', 'bin', 'node'))) {
    return { kind: 'stale', reason: 'the pinned Node (node_modules/node/bin/node) is missing' };
  }
  return { kind: 'fresh' };
}

/** The npm to run: the one running this script (npm sets npm_execpath), else `npm` on PATH. */
export function npmCommand(env, nodePath) {
  const execPath = env.npm_execpath;
  return execPath && /\.c?js$/.test(execPath)
    ? { command: nodePath, prefix: [execPath] }
    : { command: 'npm', prefix: [] };
}

/** Installs what is missing; returns the exit code (0 when nothing had to be done). */
export function ensureInstall(root = PROJECT_ROOT, env = process.env) {
  const state = installState(root);
  if (state.kind === 'fresh') return 0;
  process.stderr.write(`switchboard: installing dependencies with npm ci (${state.reason})…\n`);
  const { command, prefix } = npmCommand(env, process.execPath);
  const result = spawnSync(command, [...prefix, 'ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: root,
    stdio: 'inherit',
    env,
  });
  if (result.error) {
    process.stderr.write(`switchboard: could not run npm ci: ${result.error.message}\n`);
    return 1;
  }
  if (result.status !== 0) {
    process.stderr.write(
      `switchboard: npm ci failed (exit ${result.status ?? result.signal}); run \`npm ci\` yourself to see why.\n`,
    );
    return result.status ?? 1;
  }
  return 0;
}

// The `switchboard` command as a user runs it (bin/switchboard.js in a child process), against a daemon started in this
// process with the fake Claude CLI as its agent.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Daemon } from '../../src/main.ts';
import { startDaemon } from '../../src/main.ts';
import { tempDir } from './temp-dir.ts';

const BIN = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));
const FAKE_CLAUDE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `switchboard <args>` with `env` over this process's environment (in `cwd` when given); never rejects. */
export function switchboard(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, timeout: 30_000, ...(cwd ? { cwd } : {}) },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

export interface CliDaemon {
  /** The temp directory: the only workspace; holds the home and the work folder. */
  dir: string;
  home: string;
  /** An empty folder in the workspace, for launches. */
  workdir: string;
  /** The environment that points the command at this daemon (SWITCHBOARD_HOME). */
  env: NodeJS.ProcessEnv;
  /** The running daemon (from the enclosing describe's `before` on). */
  readonly daemon: Daemon;
}

/**
 * For the enclosing describe: a daemon started before its tests (gateway on a free port, silent log, the fake Claude
 * CLI as the claude agent, plus dotted config `overrides`) and stopped after them, its temp directory then removed.
 */
export function cliDaemon(prefix: string, overrides: Record<string, unknown> = {}): CliDaemon {
  const dir = tempDir(prefix);
  const home = join(dir.path, 'home');
  const workdir = join(dir.path, 'work');
  let daemon: Daemon | undefined;

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    daemon = await startDaemon({
      home,
      env: {},
      overrides: {
        'gateway.port': 0,
        workspaces: [dir.path],
        'log.level': 'silent',
        'harnesses.claude.executable': FAKE_CLAUDE,
        ...overrides,
      },
    });
  });

  after(async () => {
    await daemon?.stop();
    dir.remove();
  });

  return {
    dir: dir.path,
    home,
    workdir,
    env: { SWITCHBOARD_HOME: home },
    get daemon(): Daemon {
      if (!daemon) throw new Error('cliDaemon: the daemon runs only from the describe’s before hook on');
      return daemon;
    },
  };
}

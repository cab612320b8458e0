import { Command, CommanderError } from 'commander';
import { systemClock } from '../core/clock.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import { OPERATIONS } from '../operations/table.ts';
import { VERSION } from '../version.ts';
import { CliError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import { formatChecks, runDoctor } from './doctor.ts';
import { addLinearCommands } from './linear-commands.ts';
import { addOperationCommands } from './op-commands.ts';
import { addServiceCommands } from './service-commands.ts';
import { runStart } from './start.ts';

/** Builds the commander program: `start`, `doctor`, `service`, `linear`, and one subcommand per operation exposed to the CLI. */
export function buildProgram(io: CliIo, state: { exitCode: number; keepAlive: boolean }): Command {
  const clock = io.clock ?? systemClock({ holdProcess: true });
  const program = new Command('switchboard')
    .description('Run coding agents (Claude Code, Codex, Gemini CLI) as durable background sessions')
    .version(VERSION)
    .option('--home <dir>', 'state directory (default $SWITCHBOARD_HOME or ~/.switchboard)')
    .option('--url <url>', 'daemon URL (default: from <home>/daemon.json, else http://127.0.0.1:18789)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('start')
    .description('Run the daemon in the foreground (gateway, store, sessions)')
    .option('--config <file>', 'config file (default <home>/config.json5)')
    .option('--port <port>', 'gateway port (0 picks a free one)')
    .option('--host <host>', 'gateway host (loopback unless gateway.allowRemote)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent')
    .option('--set <key=value>', 'override any config key (repeatable)', (v: string, prev: string[] = []) => [
      ...prev,
      v,
    ])
    .action(async (opts: Record<string, unknown>) => {
      const home = program.opts<{ home?: string }>().home;
      await runStart({ ...opts, ...(home ? { home } : {}) }, io.env);
      state.keepAlive = true;
    });

  program
    .command('doctor')
    .description('Check Node, the config, the store, the agent executables and the daemon')
    .option('--json', 'print the checks as JSON')
    .action(async (opts: { json?: boolean }) => {
      const home = program.opts<{ home?: string }>().home;
      const checks = await runDoctor({ env: io.env, ...(home ? { home } : {}) });
      io.out(opts.json ? JSON.stringify(checks, null, 2) : formatChecks(checks));
      if (checks.some((c) => c.status === 'fail')) state.exitCode = 1;
    });

  addOperationCommands(program, OPERATIONS, {
    out: io.out,
    env: io.env,
    setExitCode: (code) => (state.exitCode = code),
    clock,
    ...(io.cwd !== undefined ? { cwd: io.cwd } : {}),
  });
  addLinearCommands(program, { out: io.out, env: io.env, clock });
  addServiceCommands(program, { ...io, setExitCode: (code) => (state.exitCode = code) });
  return program;
}

/** Runs the CLI on `argv` (without node and script). Returns the exit code, and whether a daemon keeps the process alive. */
export async function runCli(argv: string[], io: CliIo): Promise<{ exitCode: number; keepAlive: boolean }> {
  const state = { exitCode: 0, keepAlive: false };
  const program = buildProgram(io, state);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return state;
  } catch (error) {
    if (error instanceof CommanderError) {
      const ok = error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
      return { exitCode: ok ? 0 : 2, keepAlive: false };
    }
    if (error instanceof CliError) {
      io.err(`switchboard: ${error.message}`);
      return { exitCode: error.exitCode, keepAlive: false };
    }
    if (error instanceof AppError) {
      io.err(`switchboard: ${error.message}`);
      return { exitCode: error.kind === 'invalid_input' ? 2 : 1, keepAlive: false };
    }
    io.err(`switchboard: ${errorMessage(error)}`);
    return { exitCode: 1, keepAlive: false };
  }
}

/** Runs the CLI on this process's arguments, stdout, stderr and environment, and sets its exit code (unless a daemon keeps it alive). */
export async function runMain(): Promise<void> {
  const result = await runCli(process.argv.slice(2), {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    env: process.env,
  });
  if (!result.keepAlive) process.exitCode = result.exitCode;
}

if (import.meta.main) await runMain();

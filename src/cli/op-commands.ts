import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ZodType } from 'zod';
import type { Clock } from '../core/clock.ts';
import { expandHome } from '../core/config-load.ts';
import { coerceText, fieldDescription, fieldKind, kebab } from '../operations/field-kind.ts';
import { parseOperationInput } from '../operations/input.ts';
import type { Operation } from '../operations/operation.ts';
import { CliError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import { resolveConnection, rpcCall } from './client.ts';
import { followSession } from './follow.ts';
import { nextPageHint } from './next-page.ts';
import { renderRecord } from './render.ts';

/**
 * What the generated commands need: the CLI's output, environment and working directory, its clock (`--follow` waits
 * with it before reconnecting; its timers hold the process open), and a way to set the exit code.
 */
export type OperationCommandsIo = Pick<CliIo, 'out' | 'env' | 'cwd'> & {
  clock: Clock;
  setExitCode: (code: number) => void;
};

/**
 * Inputs that name a directory on this machine: the daemon runs elsewhere (its own cwd), so the CLI sends them absolute
 * (`~` is this user's home, as the shell would have made it).
 */
const PATH_KEYS = new Set(['workdir']);

/** The help of a PATH_KEYS option, as the CLI takes it (the operation's own says what the daemon takes: absolute). */
const PATH_HELP =
  'working directory (relative to where you run the command, or absolute), inside a configured workspace';

function absolutePaths(params: Record<string, unknown>, cwd: string): void {
  for (const key of PATH_KEYS) {
    const value = params[key];
    if (typeof value === 'string' && value.trim() !== '') params[key] = resolve(cwd, expandHome(value.trim()));
  }
}

function argKey(arg: string): { key: string; variadic: boolean } {
  const inner = arg.replace(/^[<[]|[>\]]$/g, '');
  return { key: inner.replace(/\.\.\.$/, ''), variadic: inner.endsWith('...') };
}

/**
 * The command for `name`: one word is a subcommand of the program; two (`approvals rules`) a subcommand of the first,
 * which is found (an operation's own command, declared earlier) or made.
 */
function subcommand(program: Command, name: string): Command {
  const [parent, child] = name.split(' ');
  if (!child || !parent) return program.command(name);
  const existing = program.commands.find((c) => c.name() === parent);
  return (existing ?? program.command(parent)).command(child);
}

/** Adds one subcommand per operation exposed to the CLI; each calls the daemon's RPC method for it. */
export function addOperationCommands(program: Command, ops: readonly Operation[], io: OperationCommandsIo): void {
  for (const op of ops) {
    const spec = op.expose.cli;
    const method = op.expose.rpc;
    if (!spec || !method) continue;
    const shape = op.input.shape as Record<string, ZodType>;
    const positional = spec.args.map(argKey);
    const cmd = subcommand(program, spec.name).description(op.summary);
    for (const arg of spec.args) cmd.argument(arg);
    const optionKeys = Object.keys(shape).filter(
      (k) => !positional.some((p) => p.key === k) && !(spec.hide ?? []).includes(k),
    );
    const flagOf = (key: string): string => kebab(spec.flags?.[key] ?? key);
    for (const key of optionKeys) {
      const schema = shape[key] as ZodType;
      const description = PATH_KEYS.has(key) ? PATH_HELP : fieldDescription(schema);
      const kind = fieldKind(schema);
      if (kind === 'boolean') cmd.option(`--${flagOf(key)}`, description);
      // A list: the flag repeated and/or comma-separated (`--label gpu --label linux`, `--label gpu,linux`).
      else if (kind === 'array')
        cmd.option(`--${flagOf(key)} <value>`, description, (v: string, prev: string[] | undefined) => [
          ...(prev ?? []),
          v,
        ]);
      else cmd.option(`--${flagOf(key)} <value>`, description);
    }
    const switches = Object.entries(spec.switches ?? {});
    for (const [flag, { description }] of switches) cmd.option(`--${kebab(flag)}`, description);
    cmd.option('--json', 'print the result as JSON');
    if (op.follow) cmd.option('-f, --follow', 'stream what the agent says and does until it waits for input or ends');
    cmd.action(async (...values: unknown[]) => {
      // With the parent's: a parent command's --json (`approvals rules --json`) is parsed as the parent's option.
      const opts = cmd.optsWithGlobals<Record<string, unknown>>();
      const globals = program.opts<{ home?: string; url?: string }>();
      const params: Record<string, unknown> = {};
      positional.forEach(({ key, variadic }, i) => {
        const value = values[i];
        if (value === undefined || (Array.isArray(value) && value.length === 0)) return;
        params[key] =
          variadic && Array.isArray(value)
            ? value.join(' ')
            : coerceText(fieldKind(shape[key] as ZodType), String(value));
      });
      for (const key of optionKeys) {
        const value = opts[spec.flags?.[key] ?? key];
        if (value === undefined) continue;
        const kind = fieldKind(shape[key] as ZodType);
        params[key] = Array.isArray(value)
          ? value.flatMap((v) => coerceText(kind, String(v)))
          : typeof value === 'string'
            ? coerceText(kind, value)
            : value;
      }
      for (const [flag, { key, value }] of switches) if (opts[flag] === true) params[key] = value;
      absolutePaths(params, io.cwd ?? process.cwd());
      // Validate here first: bad input is exit code 2 with the field named, whether or not the daemon runs.
      parseOperationInput(op, params);
      const conn = resolveConnection({
        env: io.env,
        ...(globals.home ? { home: globals.home } : {}),
        ...(globals.url ? { url: globals.url } : {}),
      });
      // Like any agent's own CLI, a launch typed without --workdir runs where it was typed, when the daemon runs on
      // this machine and no node was named (a daemon elsewhere, or another node, uses its own defaultWorkdir); one
      // that resumes a session runs in that session's workdir.
      const defaultsHere = params.on === undefined && params.resumeSessionId === undefined;
      if (conn.local && 'workdir' in shape && params.workdir === undefined && defaultsHere)
        params.workdir = io.cwd ?? process.cwd();
      const result = await rpcCall(conn, method, params);
      io.out(opts.json ? JSON.stringify(result, null, 2) : op.format(result));
      if (!opts.json) {
        const words = [
          ...positional.flatMap(({ key }) => (params[key] === undefined ? [] : [String(params[key])])),
          ...optionKeys
            .filter((k) => k !== 'cursor' && opts[k] !== undefined)
            .flatMap((k) => (opts[k] === true ? [`--${kebab(k)}`] : [`--${kebab(k)}`, String(opts[k])])),
        ];
        const hint = nextPageHint(spec.name, words, result);
        if (hint) io.out(hint);
      }
      if (!opts.follow || !op.follow) return;
      const start = op.follow(result);
      switch (start.kind) {
        case 'none':
          throw new CliError('nothing to follow', 2);
        case 'idle':
          // The session already waits for input: say so, as following it to that point would have.
          if (start.waitingFor !== null) {
            for (const line of renderRecord({ seq: 0, type: 'waiting', reason: start.waitingFor }, start.session.name))
              io.out(line);
          }
          return;
        case 'session':
          io.setExitCode(
            await followSession(conn, start.session, {
              from: start.from,
              json: Boolean(opts.json),
              write: io.out,
              clock: io.clock,
            }),
          );
      }
    });
  }
}

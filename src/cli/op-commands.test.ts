import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Command, CommanderError } from 'commander';
import { systemClock } from '../core/clock.ts';
import { AppError } from '../core/errors.ts';
import { cronAddOperation } from '../operations/cron.ts';
import { launchOperation } from '../operations/launch.ts';
import { listOperation } from '../operations/list.ts';
import type { Operation } from '../operations/operation.ts';
import { addOperationCommands } from './op-commands.ts';

/** A stand-in daemon: answers every JSON-RPC call with a cron task and keeps the calls' params. */
async function startRpcRecorder(
  answer?: (method: string) => unknown,
): Promise<{ server: Server; url: string; calls: { method: string; params: Record<string, unknown> }[] }> {
  const calls: { method: string; params: Record<string, unknown> }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        method: string;
        params: Record<string, unknown>;
      };
      calls.push({ method: body.method, params: body.params });
      const task = {
        id: 't1',
        name: 'nightly',
        schedule: '0 9 * * *',
        timezone: null,
        prompt: 'p',
        enabled: false,
        nextRunAt: null,
        lastRunAt: null,
      };
      const result = answer ? answer(body.method) : task;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

describe('operation subcommands', () => {
  let rpc: Awaited<ReturnType<typeof startRpcRecorder>>;
  const out: string[] = [];

  beforeEach(async () => {
    rpc = await startRpcRecorder();
    out.length = 0;
  });
  afterEach(async () => {
    rpc.server.closeAllConnections();
    await new Promise<void>((resolve) => rpc.server.close(() => resolve()));
  });

  async function run(args: string[], options: { ops?: Operation[]; cwd?: string } = {}): Promise<void> {
    const program = new Command('switchboard')
      .exitOverride()
      .configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => out.push(s) });
    addOperationCommands(program, options.ops ?? [cronAddOperation], {
      out: (t) => out.push(t),
      env: { SWITCHBOARD_URL: rpc.url, SWITCHBOARD_TOKEN: 'test-token' },
      setExitCode: () => undefined,
      clock: systemClock({ holdProcess: true }),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    });
    for (const cmd of program.commands) cmd.exitOverride();
    await program.parseAsync(args, { from: 'user' });
  }

  it('cron-add --disabled sends enabled: false; without it the input has no enabled key', async () => {
    await run(['cron-add', 'nightly', '0 9 * * *', 'run', 'the', 'checks', '--disabled']);
    await run(['cron-add', 'nightly', '0 9 * * *', 'run the checks', '--timezone', 'UTC']);
    assert.deepEqual(rpc.calls, [
      {
        method: 'cron.add',
        params: { name: 'nightly', schedule: '0 9 * * *', prompt: 'run the checks', enabled: false },
      },
      {
        method: 'cron.add',
        params: { name: 'nightly', schedule: '0 9 * * *', prompt: 'run the checks', timezone: 'UTC' },
      },
    ]);
  });

  it('cron-add offers --disabled and no --enabled (a flag that could only say true)', async () => {
    await assert.rejects(
      run(['cron-add', '--help']),
      (e: unknown) => e instanceof CommanderError && e.code === 'commander.helpDisplayed',
    );
    const help = out.join('');
    assert.match(help, /--disabled\s+add it switched off/);
    assert.doesNotMatch(help, /--enabled/);
    await assert.rejects(
      run(['cron-add', 'nightly', '0 9 * * *', 'p', '--enabled']),
      (e: unknown) => e instanceof CommanderError && e.code === 'commander.unknownOption',
    );
    assert.equal(rpc.calls.length, 0);
  });

  it('bad input is refused before any call, naming the field', async () => {
    await assert.rejects(
      run(['cron-add', 'nightly', '0 9 * * *', ' ', '--disabled']),
      (e: unknown) => e instanceof AppError && e.field === 'prompt' && /must not be empty/.test(e.message),
    );
    assert.equal(rpc.calls.length, 0);
  });

  it('launch --on and a repeated or comma-separated --label send on and labels', async () => {
    const launch = launchOperation as unknown as Operation;
    await run(['launch', 'train', '--on', 'beta', '--label', 'gpu', '--label', 'linux,big', '--json'], {
      ops: [launch],
    });
    assert.deepEqual(
      rpc.calls.map((c) => [c.params.on, c.params.labels]),
      [['beta', ['gpu', 'linux', 'big']]],
    );
  });

  it("launch --workdir sends the directory resolved against where the command was typed, not the daemon's cwd", async () => {
    const launch = launchOperation as unknown as Operation;
    await run(['launch', 'fix', 'it', '--workdir', 'repo/sub', '--json'], {
      ops: [launch],
      cwd: '/home/someone/projects',
    });
    await run(['launch', 'fix', 'it', '--workdir', '../other', '--json'], {
      ops: [launch],
      cwd: '/home/someone/projects',
    });
    await run(['launch', 'fix', 'it', '--workdir', '/srv/abs', '--json'], {
      ops: [launch],
      cwd: '/home/someone/projects',
    });
    // A `~` the shell left alone (quoted, or in --workdir=~/…) is this user's home, not a folder named `~`.
    await run(['launch', 'fix', 'it', '--workdir=~/code/app', '--json'], {
      ops: [launch],
      cwd: '/home/someone/projects',
    });
    assert.deepEqual(
      rpc.calls.map((c) => c.params.workdir),
      ['/home/someone/projects/repo/sub', '/home/someone/other', '/srv/abs', join(homedir(), 'code', 'app')],
    );
  });
});

describe('option help', () => {
  it('describes each option, also one whose description sits inside its optional wrapper; --workdir as the CLI takes it', () => {
    const program = new Command('switchboard');
    addOperationCommands(program, [launchOperation], {
      out: () => undefined,
      env: {},
      setExitCode: () => undefined,
      clock: systemClock(),
    });
    const help = program.commands.find((c) => c.name() === 'launch')?.helpInformation() ?? '';
    const entries = help.split(/\n {2}(?=-)/).map((entry) => entry.replace(/\s+/g, ' '));
    const line = (flag: string): string => entries.find((entry) => entry.startsWith(`${flag} `)) ?? '';
    assert.match(line('--workdir'), /relative to where you run the command, or absolute/);
    assert.match(line('--resume-session-id'), /continue an earlier session/);
    assert.match(line('--harness'), /coding agent: claude, codex or gemini/);
  });
});

describe('paged list subcommands', () => {
  it('sessions takes --limit and --cursor, and prints the command for the next page', async () => {
    const rpc = await startRpcRecorder(() => ({ status: 'failed', sessions: [], count: 0, nextCursor: 'WzEsMl0' }));
    const out: string[] = [];
    try {
      const program = new Command('switchboard').exitOverride();
      addOperationCommands(program, [listOperation], {
        out: (t) => out.push(t),
        env: { SWITCHBOARD_URL: rpc.url, SWITCHBOARD_TOKEN: 'test-token' },
        setExitCode: () => undefined,
        clock: systemClock({ holdProcess: true }),
      });
      await program.parseAsync(['sessions', '--status', 'failed', '--limit', '2', '--cursor', 'WzMsNF0'], {
        from: 'user',
      });
      assert.deepEqual(rpc.calls, [
        { method: 'sessions.list', params: { status: 'failed', limit: 2, cursor: 'WzMsNF0' } },
      ]);
      assert.equal(out.at(-1), 'next page: switchboard sessions --status failed --limit 2 --cursor WzEsMl0');
    } finally {
      rpc.server.closeAllConnections();
      await new Promise<void>((resolve) => rpc.server.close(() => resolve()));
    }
  });
});

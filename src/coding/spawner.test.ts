import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait-for.ts';
import type { AgentProcessOptions } from './agent-process.ts';

// The spawner is opt-in and read once at import: turn it on for this file's process before loading the modules.
process.env.SWITCHBOARD_SPAWNER = '1';
const { AgentProcess } = await import('./agent-process.ts');
const { agentSpawner, SPAWNER_SUPPORTED } = await import('./spawner.ts');
type AgentProcess = InstanceType<typeof AgentProcess>;

/** A node one-liner as an agent: echoes stdin lines to stdout, says `bye` on stderr at EOF and exits with `code`. */
function echo(code: number, extra: Partial<AgentProcessOptions> = {}): { proc: AgentProcess; lines: string[] } {
  const lines: string[] = [];
  const script = `require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => console.log('got ' + l)).on('close', () => { process.stderr.write('bye'); process.exitCode = ${code}; });`;
  const proc = new AgentProcess({
    command: process.execPath,
    args: ['-e', script],
    cwd: process.cwd(),
    env: process.env,
    stdin: 'pipe',
    sessionId: 'spawner-test',
    onLine: (line) => lines.push(line),
    ...extra,
  });
  return { proc, lines };
}

/** The parent pid of `pid` (Linux /proc). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('AgentProcess through the spawner', { skip: !SPAWNER_SUPPORTED && 'POSIX only' }, () => {
  it('runs the agent as a child of the spawner: stdin, stdout lines, the stderr tail and the exit code reach the daemon', async () => {
    let pidAtFirstLine: number | undefined;
    const { proc, lines } = echo(3, {
      onLine: (line) => {
        pidAtFirstLine ??= proc.pid;
        lines.push(line);
      },
    });
    proc.child.stdin?.write('one\ntwo\n');
    proc.child.stdin?.end();
    const info = await proc.exited;
    assert.deepEqual(info, { code: 3, signal: null });
    assert.deepEqual(lines, ['got one', 'got two']);
    assert.equal(proc.stderrTail, 'bye');
    const spawner = agentSpawner();
    assert.ok(spawner?.pid, 'a spawner runs');
    assert.equal(pidAtFirstLine, proc.pid, 'the pid is known before the first line');
    assert.equal(proc.child.exitCode, 3);
  });

  it(
    'is the spawner the agent is forked from (Linux)',
    { skip: process.platform !== 'linux' && 'needs /proc' },
    async () => {
      const { proc } = echo(0);
      await waitFor('the pid', () => proc.pid);
      assert.equal(parentOf(proc.pid ?? 0), agentSpawner()?.pid);
      proc.child.stdin?.end();
      await proc.exited;
    },
  );

  it('reports a missing program with the message an in-process spawn gives', async () => {
    const proc = new AgentProcess({
      command: '/nonexistent/agent-cli',
      args: [],
      cwd: process.cwd(),
      env: process.env,
      stdin: 'ignore',
      sessionId: 'spawner-test',
      onLine: () => {},
    });
    assert.deepEqual(await proc.exited, {
      code: null,
      signal: null,
      spawnError: 'spawn /nonexistent/agent-cli ENOENT',
    });
  });

  it('throws a NUL byte in the arguments from the constructor, as before', () => {
    assert.throws(() => echo(0, { args: ['-e', 'a\0b'] }), { code: 'ERR_INVALID_ARG_VALUE' });
  });

  it('stops the agent (SIGTERM to its group), also when asked before its pid is known', async () => {
    const { proc } = echo(0);
    proc.stop(5_000);
    const info = await proc.exited;
    assert.equal(info.signal, 'SIGTERM');
  });

  it('keeps the output of agents running when the spawner dies, and starts a new spawner for the next launch', async () => {
    const { proc, lines } = echo(0);
    await waitFor('the pid', () => proc.pid);
    const first = agentSpawner()?.pid;
    assert.ok(first);
    process.kill(first, 'SIGKILL');
    // Launched at once: whether or not the death is noticed yet, the launch is not lost.
    const next = echo(4);
    next.proc.child.stdin?.end('again\n');
    assert.deepEqual(await next.proc.exited, { code: 4, signal: null });
    assert.deepEqual(next.lines, ['got again']);
    proc.child.stdin?.end('late\n');
    const info = await proc.exited;
    assert.deepEqual(lines, ['got late']);
    assert.deepEqual(info, { code: null, signal: null }, 'the exit status went with the spawner');
    const again = echo(0);
    again.proc.child.stdin?.end();
    await again.proc.exited;
    assert.notEqual(agentSpawner()?.pid, first);
  });
});

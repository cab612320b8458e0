import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { SESSION_ENV_TAG } from './agent-process.ts';
import { orphanReport, sweepOrphans } from './orphans.ts';

/** A process tagged as the agent of `sessionId`, leading its own group as agents do, that outlives nothing by itself. */
function fakeAgent(sessionId: string): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], {
    env: { ...process.env, [SESSION_ENV_TAG]: sessionId },
    stdio: 'ignore',
    detached: true,
  });
}

describe('orphans left by a daemon that died', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  const started: ChildProcess[] = [];
  after(() => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('stops the agent processes of cut-off sessions that still run, reports them, and leaves a recycled pid alone', async () => {
    const orphan = fakeAgent('s-1');
    const stranger = fakeAgent('someone-else');
    started.push(orphan, stranger);
    await Promise.all([once(orphan, 'spawn'), once(stranger, 'spawn')]);
    const remained = sweepOrphans([
      { id: 's-1', name: 'left-behind', pid: orphan.pid ?? -1 },
      { id: 's-2', name: 'recycled', pid: stranger.pid ?? -1 },
      { id: 's-3', name: 'never-started', pid: null },
    ]);
    assert.deepEqual(remained, [{ sessionId: 's-1', name: 'left-behind', pid: orphan.pid }]);
    const [, signal] = (await once(orphan, 'exit')) as [number | null, NodeJS.Signals | null];
    assert.equal(signal, 'SIGTERM');
    assert.equal(stranger.exitCode, null, 'a pid now used by another process is not touched');
    assert.equal(
      orphanReport(remained, 3),
      `1 agent process(es) outlived the last daemon and were stopped now: left-behind (pid ${orphan.pid})`,
    );
    assert.equal(orphanReport([], 2), 'no agent process outlived the last daemon (2 session(s) were cut off)');
  });
});

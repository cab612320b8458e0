import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { GUARD_SUPPORTED, OrphanGuard } from './orphan-guard.ts';

/** A stand-in agent: leads its own process group, as AgentProcess spawns them; `stubborn` ignores SIGTERM. */
async function agent(stubborn = false): Promise<ChildProcess & { pid: number }> {
  const code = `${stubborn ? "process.on('SIGTERM', () => {});" : ''} setInterval(() => {}, 1 << 30);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore', detached: true });
  await once(child, 'spawn');
  // Give a stubborn one time to install its handler before anything signals it.
  if (stubborn) await new Promise((resolve) => setTimeout(resolve, 200));
  return child as ChildProcess & { pid: number };
}

const exitSignal = async (child: ChildProcess): Promise<NodeJS.Signals | null> => ((await once(child, 'exit')) as [number | null, NodeJS.Signals | null])[1];

describe('OrphanGuard', { skip: !GUARD_SUPPORTED && 'POSIX process groups only' }, () => {
  const started: ChildProcess[] = [];
  after(() => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('stops the watched agent groups when the daemon side goes away, SIGKILL after the grace for a stubborn one', async () => {
    const guard = new OrphanGuard(300);
    const polite = await agent();
    const stubborn = await agent(true);
    started.push(polite, stubborn);
    guard.watch(polite.pid);
    guard.watch(stubborn.pid);
    const signals = Promise.all([exitSignal(polite), exitSignal(stubborn)]);
    await guard.close();
    assert.deepEqual(await signals, ['SIGTERM', 'SIGKILL']);
  });

  it('leaves an agent that already exited (unwatched) alone', async () => {
    const guard = new OrphanGuard(300);
    const kept = await agent();
    started.push(kept);
    guard.watch(kept.pid);
    guard.unwatch(kept.pid);
    await guard.close();
    assert.equal(kept.exitCode, null);
    assert.equal(kept.signalCode, null);
  });

  it('starts a new guard, told of every live agent, when the guard dies while the daemon runs', async () => {
    const guard = new OrphanGuard(300);
    const a = await agent();
    started.push(a);
    guard.watch(a.pid);
    const first = guard.pid;
    assert.ok(first);
    process.kill(first, 'SIGKILL');
    const deadline = Date.now() + 5_000;
    while (guard.pid === first || guard.pid === undefined) {
      assert.ok(Date.now() < deadline, 'a new guard starts');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ended = exitSignal(a);
    await guard.close();
    assert.equal(await ended, 'SIGTERM');
  });
});

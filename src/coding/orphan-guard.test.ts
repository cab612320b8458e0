import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait-for.ts';
import { GUARD_SUPPORTED, OrphanGuard } from './orphan-guard.ts';

/**
 * A stand-in agent: leads its own process group, as AgentProcess spawns them; `stubborn` ignores SIGTERM. Resolves
 * once it prints `ready`, after its SIGTERM handler is installed, so nothing signals it before.
 */
async function agent(stubborn = false): Promise<ChildProcess & { pid: number }> {
  const code = `${stubborn ? "process.on('SIGTERM', () => {});" : ''} process.stdout.write('ready\\n'); setInterval(() => {}, 1 << 30);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  await once(child.stdout, 'data');
  return child as ChildProcess & { pid: number };
}

const exitSignal = async (child: ChildProcess): Promise<NodeJS.Signals | null> =>
  ((await once(child, 'exit')) as [number | null, NodeJS.Signals | null])[1];

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
    // The guard's exit is not observable from here (it is the OrphanGuard's own child): poll for its successor.
    await waitFor('a new guard to start', () => guard.pid !== first && guard.pid !== undefined, 5_000);
    const ended = exitSignal(a);
    await guard.close();
    assert.equal(await ended, 'SIGTERM');
  });
});

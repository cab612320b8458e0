import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { managerPerTestOn } from '../../test/support/manager-on-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';

const ok = { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 } as const;
const IDLE_MS = 30 * 60_000;

describe('Session idle end', () => {
  const { f, signals } = managerPerTestOn((path) => openTestStore(path));

  const waits = (): string[] => signals.flatMap((s) => (s.type === 'waiting' ? [s.reason] : []));

  it('kills a multi-turn session left waiting for idleTimeoutMinutes, with the reason "idle for …"', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, ok);
    f.clock.advance(IDLE_MS);
    assert.equal(session.status, 'killed');
    assert.equal(session.record.endReason, 'idle for 30 min');
    assert.equal((await f.manager.get(session.id)).status, 'killed', 'the stored row says killed too');
    assert.ok(f.harness.last.ended, 'a session waiting for input is let go by closing its input');
  });

  it('kills a session stalled outside a tool call once it has been silent for idleTimeoutMinutes', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, { type: 'text', text: 'thinking…' });
    f.clock.advance(15_000);
    assert.equal(session.waitingFor, 'stalled');
    f.clock.advance(IDLE_MS);
    assert.equal(session.status, 'killed');
    assert.equal(session.record.endReason, 'idle for 30 min');
    assert.ok(f.harness.last.killed, 'a silent agent is stopped, not asked politely');
  });

  it('stops an agent left waiting for a permission answer for idleTimeoutMinutes', async () => {
    const session = await f.manager.launch({
      prompt: 'p',
      workdir: f.workdir,
      originChannel: 'cli',
      permissionMode: 'default',
    });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'permission', requestId: 'r1', tool: 'Bash', input: { command: 'rm x' } },
    );
    f.clock.advance(IDLE_MS);
    assert.equal(session.status, 'killed');
    assert.equal(session.record.endReason, 'idle for 30 min');
    assert.ok(f.harness.last.killed, 'mid-turn, closing its input would not end it');
  });

  it('never idle-kills a turn that still streams activity after a "stalled" alarm, and still announces its turn end', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' });
    f.clock.advance(15_000);
    assert.equal(session.waitingFor, 'stalled');
    // A thinking model: stream deltas (activity) every 10 s, for twice the idle timeout.
    for (let t = 0; t < 2 * IDLE_MS; t += 10_000) {
      await run.emit({ type: 'activity' });
      f.clock.advance(10_000);
    }
    assert.equal(session.status, 'running');
    await run.emit({ type: 'text', text: 'done' }, ok);
    assert.deepEqual(waits(), ['stalled', 'turn-end'], 'the stall is announced once, the turn end after it');
  });

  it('never idle-kills a turn whose tool call began after a "stalled" alarm', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' });
    f.clock.advance(15_000);
    await run.emit({ type: 'tool', id: 't', name: 'Bash', input: { command: 'npm test' } });
    f.clock.advance(2 * IDLE_MS);
    assert.equal(session.status, 'running');
    assert.equal(session.waitingFor, null);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dispatchRecord } from '../../../test/support/dispatch-record.ts';
import { ManualClock } from '../../core/clock.ts';
import { silentLogger } from '../../core/logger.ts';
import type { LogRecord } from '../../store/jsonl-log.ts';
import { SessionWatch } from './session-watch.ts';

/** Resolves once the promise callbacks queued so far (the fake store's answers) have run. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A SessionWatch over recording fakes: one session log the test writes to, live sessions, store and stream calls. */
function rig() {
  const clock = new ManualClock();
  const listeners = new Map<string, (record: LogRecord) => void>();
  const killed: { sessionId: string; reason: string }[] = [];
  const touched: { dispatchId: string; at: number }[] = [];
  const endCauses: string[] = [];
  const streamed: string[] = [];
  let seq = 0;
  const watch = new SessionWatch({
    clock,
    logger: silentLogger(),
    logs: {
      subscribe: (sessionId, listener) => {
        listeners.set(sessionId, listener);
        return () => listeners.delete(sessionId);
      },
    },
    sessions: {
      liveById: () => ({ isActive: true }),
      kill: async (sessionId, reason) => killed.push({ sessionId, reason }),
    },
    store: {
      touch: async (dispatchId, at) => void touched.push({ dispatchId, at }),
      setEndCause: async (sessionId, cause) => {
        endCauses.push(`${sessionId}:${cause}`);
        return true;
      },
    },
    reporter: {
      stream: () => ({
        thought: (body: string) => void streamed.push(`thought ${body}`),
        action: (action: string) => void streamed.push(`action ${action}`),
      }),
    },
    pc: { profiles: {}, watchdog: { inactivitySec: 120, maxTotalSec: 7_200, toolTimeoutSec: 600 } },
  });
  const write = (sessionId: string, type: string, fields: Record<string, unknown> = {}): void => {
    seq += 1;
    listeners.get(sessionId)?.({ v: 1, seq, ts: clock.now(), type, ...fields });
  };
  return { clock, watch, listeners, killed, touched, endCauses, streamed, write };
}

describe('SessionWatch', () => {
  it('follows the session log: streams the worker’s text and tool calls, and touches the dispatch at most every 30 s', () => {
    const r = rig();
    r.watch.watch(dispatchRecord(), 's1', 'worker');
    assert.ok(r.watch.isWatched('s1'));
    r.write('s1', 'output', { text: 'reading the code' });
    r.write('s1', 'tool', { id: 't', name: 'Bash', input: { command: 'ls' } });
    r.clock.advance(29_000);
    r.write('s1', 'toolResult', { id: 't' });
    r.clock.advance(1_000);
    r.write('s1', 'output', { text: 'done' });
    r.write('s1', 'status', { status: 'running' });
    assert.deepEqual(r.streamed, ['thought reading the code', 'action Running Bash', 'thought done']);
    assert.equal(r.touched.length, 2);
  });

  it('a watchdog trip records the end cause, kills the session and remembers the trip', async () => {
    const r = rig();
    r.watch.watch(dispatchRecord(), 's1', 'audit');
    r.clock.advance(120_000);
    await settled(); // the end cause is stored (awaited) before the kill
    assert.deepEqual(r.endCauses, ['s1:watchdog']);
    assert.equal(r.killed.length, 1);
    assert.match(r.killed[0]?.reason ?? '', /^watchdog: no activity/);
    assert.equal(r.watch.tripOf('s1')?.kind, 'inactivity');
  });

  it('unwatch stops the watchdog and the log subscription', () => {
    const r = rig();
    r.watch.watch(dispatchRecord(), 's1', 'worker');
    r.watch.unwatch('s1');
    assert.equal(r.watch.isWatched('s1'), false);
    assert.equal(r.listeners.size, 0);
    r.clock.advance(10 * 120_000);
    assert.deepEqual(r.killed, []);
  });
});

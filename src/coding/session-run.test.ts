// One agent run: the RunSpec a stored session starts with, and consuming a run so it always ends with one `exited`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScriptedRun } from '../../test/support/scripted-harness.ts';
import { storedSession } from '../../test/support/stored-session.ts';
import type { HarnessEvent, Run } from './harness.ts';
import { consumeRun, runSpecOf } from './session-run.ts';

describe('session run', () => {
  it('the RunSpec comes from the record and its launch spec, optional fields only when set', () => {
    assert.deepEqual(runSpecOf(storedSession()), {
      sessionId: 's1',
      prompt: 'do it',
      workdir: '/w',
      permissionMode: 'default',
      maxBudgetUsd: 5,
    });
    const spec = runSpecOf(
      storedSession({}, { model: 'opus', systemPrompt: 'sys', allowedTools: ['Read'], resumeBackendId: 'b1' }),
    );
    assert.equal(spec.model, 'opus');
    assert.equal(spec.systemPrompt, 'sys');
    assert.deepEqual(spec.allowedTools, ['Read']);
    assert.equal(spec.resumeBackendId, 'b1');
    assert.equal(spec.forkSession, false);
  });

  it('hands every event over in order, and adds an exit to a run that ended without one while unfinished', async () => {
    const run = new ScriptedRun(runSpecOf(storedSession()));
    const events: HarnessEvent[] = [];
    const done = consumeRun(
      run,
      (event) => events.push(event),
      () => true,
    );
    await run.emit({ type: 'text', text: 'a' }, { type: 'exited', code: 0 });
    await done;
    assert.deepEqual(events, [
      { type: 'text', text: 'a' },
      { type: 'exited', code: 0 },
      { type: 'exited', code: null, error: 'the agent run ended without reporting an exit' },
    ]);
  });

  it('adds nothing once finished; a run that throws is reported exited with the error', async () => {
    const finished = new ScriptedRun(runSpecOf(storedSession()));
    const events: HarnessEvent[] = [];
    const done = consumeRun(
      finished,
      (event) => events.push(event),
      () => false,
    );
    await finished.emit({ type: 'exited', code: 0 });
    await done;
    assert.deepEqual(events, [{ type: 'exited', code: 0 }]);

    const broken: Run = Object.assign(new ScriptedRun(runSpecOf(storedSession())), {
      [Symbol.asyncIterator]: (): AsyncIterator<HarnessEvent> => ({
        next: () => Promise.reject(new Error('pipe closed')),
      }),
    });
    const seen: HarnessEvent[] = [];
    await consumeRun(
      broken,
      (event) => seen.push(event),
      () => false,
    );
    assert.deepEqual(seen, [{ type: 'exited', code: null, error: 'pipe closed' }]);
  });
});

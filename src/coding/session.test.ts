// Session's own state machine, driven through its public API with a scripted run and the manual clock (no manager,
// no store): statuses, waiting reasons, timers, permission answers, kill and shutdown, and that every change is in the
// log before it is signalled.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScriptedRun } from '../../test/support/scripted-harness.ts';
import { ScriptedHarness } from '../../test/support/scripted-harness.ts';
import { storedSession as storedSessionRecord } from '../../test/support/stored-session.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import type { LaunchSpec, SessionPatch, StoredSession } from '../store/coding-session-types.ts';
import type { Run, RunSpec } from './harness.ts';
import type { SessionSignal } from './session.ts';
import { endsWithQuestion, Session } from './session.ts';
import type { SessionLogEntry } from './session-log.ts';

const SAFETY_NET_MS = 15_000;
const IDLE_MS = 30 * 60_000;
const ok = { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 } as const;

function storedSession(spec: Partial<LaunchSpec> = {}): StoredSession {
  return storedSessionRecord({}, spec);
}

/** A Session over a scripted harness, with its log, row patches and signals recorded in order. */
function rig(spec: Partial<LaunchSpec> = {}, harness = new ScriptedHarness()) {
  const clock = new ManualClock();
  const log: SessionLogEntry[] = [];
  const patches: SessionPatch[] = [];
  const signals: SessionSignal[] = [];
  /** For each signal, the type of the newest log entry when it was signalled. */
  const loggedBefore: (string | undefined)[] = [];
  const session = new Session(storedSession(spec), {
    harness,
    clock,
    logger: silentLogger(),
    safetyNetMs: SAFETY_NET_MS,
    idleTimeoutMs: IDLE_MS,
    persistence: {
      log: (entry) => {
        log.push(entry);
        return { seq: log.length };
      },
      update: async (patch) => void patches.push(patch),
    },
    onSignal: (signal) => {
      signals.push(signal);
      loggedBefore.push(log.at(-1)?.type);
    },
  });
  const types = (): string[] => signals.map((s) => s.type);
  const statuses = (): string[] => log.flatMap((e) => (e.type === 'status' ? [e.status] : []));
  const run = (): ScriptedRun => harness.last;
  return { clock, log, patches, signals, loggedBefore, session, harness, types, statuses, run };
}

/** Starts the session and reports the backend session id: it is running. */
async function running(spec: Partial<LaunchSpec> = {}) {
  const r = rig(spec);
  r.session.start('launch');
  await r.run().emit({ type: 'started', backendSessionId: 'b1', model: 'm1' });
  return r;
}

describe('Session state machine', () => {
  it('starts in `starting`: writes the run and the prompt, starts the harness with the spec, signals `launched`', () => {
    const r = rig({ model: 'opus', systemPrompt: 'sys' });
    r.session.start('launch', { via: 'telegram|a|1' });
    assert.equal(r.session.status, 'starting');
    assert.ok(r.session.isActive);
    assert.ok(r.session.attached);
    assert.deepEqual(
      r.log.map((e) => e.type),
      ['run', 'user'],
    );
    assert.equal(r.session.runStartSeq, 1);
    assert.equal(r.run().spec.prompt, 'do it');
    assert.equal(r.run().spec.model, 'opus');
    assert.equal(r.run().spec.systemPrompt, 'sys');
    assert.deepEqual(r.signals[0], { type: 'launched', session: r.session, kind: 'launch', via: 'telegram|a|1' });
  });

  it('moves to `running` when the backend reports its session id, storing the id and the model', async () => {
    const r = await running();
    assert.equal(r.session.status, 'running');
    assert.deepEqual(r.statuses(), ['running']);
    assert.deepEqual(r.types(), ['launched', 'running']);
    assert.equal(r.session.record.backendSessionId, 'b1');
    assert.equal(r.session.record.model, 'm1');
    assert.ok(r.log.some((e) => e.type === 'backend' && e.backendSessionId === 'b1'));
  });

  it('moves to `running` on the first content even without a `started` event', async () => {
    const r = rig();
    r.session.start('launch');
    await r.run().emit({ type: 'text', text: 'hello' });
    assert.equal(r.session.status, 'running');
    assert.deepEqual(r.session.lastOutput(), ['hello']);
  });

  it('a multi-turn turn end waits (`turn-end`, or `question` when the text asks), adds the cost, and a message resumes it', async () => {
    const r = await running();
    await r.run().emit({ type: 'text', text: 'All done.' }, ok);
    assert.equal(r.session.status, 'running');
    assert.equal(r.session.waitingFor, 'turn-end');
    assert.equal(r.session.record.costUsd, 0.01);
    const waiting = r.signals.at(-1);
    assert.equal(waiting?.type, 'waiting');
    assert.equal(waiting?.type === 'waiting' ? waiting.preview : '', 'All done.');

    assert.equal(await r.session.send('next', { source: 'user' }), 'sent');
    assert.equal(r.session.waitingFor, null);
    assert.deepEqual(r.run().sent, ['next']);
    await r.run().emit({ type: 'text', text: 'Shall I push it?' }, ok);
    assert.equal(r.session.waitingFor, 'question');
    assert.equal(r.session.record.costUsd, 0.02);
  });

  it('a single-turn session completes at its first good turn end and closes the agent input', async () => {
    const r = await running({ multiTurn: false });
    r.clock.advance(1_000);
    await r.run().emit({ type: 'text', text: 'x' }, ok);
    assert.equal(r.session.status, 'completed');
    assert.equal(r.session.record.endReason, 'single turn finished');
    assert.equal(r.session.record.completedAt, r.clock.now());
    assert.ok(r.run().ended);
    assert.equal(r.types().at(-1), 'ended');
    await r.run().emit({ type: 'exited', code: 0 });
    await r.session.runDone;
    assert.equal(r.session.status, 'completed', 'the exit after the end changes nothing');
    assert.equal(r.session.attached, false);
  });

  it('a failed turn fails the session; budget exhaustion is stored and signalled first', async () => {
    const r = await running();
    await r.run().emit({
      type: 'turnEnd',
      outcome: { ok: false, reason: 'budget_exhausted', message: 'over budget' },
      costUsd: 5,
    });
    assert.equal(r.session.status, 'failed');
    assert.equal(r.session.record.budgetExhausted, true);
    assert.match(r.session.record.error ?? '', /over budget/);
    assert.deepEqual(r.types().slice(-2), ['budgetExhausted', 'ended']);
  });

  it('an interrupted turn changes nothing: the session goes on', async () => {
    const r = await running();
    await r
      .run()
      .emit({ type: 'turnEnd', outcome: { ok: false, reason: 'interrupted', message: 'stopped' }, costUsd: 0 });
    assert.equal(r.session.status, 'running');
    assert.equal(r.session.waitingFor, null);
  });

  it('an agent exit decides the end: while waiting → completed; mid-turn → failed; a non-zero code → failed', async () => {
    const waiting = await running();
    await waiting.run().emit(ok, { type: 'exited', code: 0 });
    await waiting.session.runDone;
    assert.equal(waiting.session.status, 'completed');
    assert.equal(waiting.session.record.endReason, 'agent exited');

    const midTurn = await running();
    await midTurn.run().emit({ type: 'exited', code: 0 });
    await midTurn.session.runDone;
    assert.equal(midTurn.session.status, 'failed');
    assert.equal(midTurn.session.record.error, 'the agent exited before finishing its turn');

    const crashed = await running();
    await crashed.run().emit({ type: 'exited', code: 3 });
    await crashed.session.runDone;
    assert.equal(crashed.session.status, 'failed');
    assert.match(crashed.session.record.error ?? '', /code 3/);
  });

  it('fails at once when the harness cannot start the agent', () => {
    class Broken extends ScriptedHarness {
      override start(_spec: RunSpec): Run {
        throw new Error('no binary');
      }
    }
    const r = rig({}, new Broken());
    r.session.start('launch');
    assert.equal(r.session.status, 'failed');
    assert.match(r.session.record.error ?? '', /could not start the agent: no binary/);
    assert.deepEqual(r.types(), ['ended'], 'no `launched` for a run that never started');
  });

  it('silence for the safety net is `stalled` (not while a tool runs); new content clears it', async () => {
    const r = await running();
    await r.run().emit({ type: 'tool', id: 't1', name: 'Bash', input: {} });
    assert.equal(r.session.openToolCalls, 1);
    r.clock.advance(SAFETY_NET_MS * 4);
    assert.equal(r.session.waitingFor, null, 'a running tool is not silence');
    await r.run().emit({ type: 'toolResult', id: 't1', isError: false });
    r.clock.advance(SAFETY_NET_MS);
    assert.equal(r.session.waitingFor, 'stalled');
    assert.equal(r.session.status, 'running', 'stalled is a waiting reason, not a status');
    await r.run().emit({ type: 'text', text: 'back' });
    assert.equal(r.session.waitingFor, null);
  });

  it('a warning alone is not progress: the safety net still fires', async () => {
    const r = await running();
    for (let i = 0; i < 3; i += 1) {
      r.clock.advance(SAFETY_NET_MS / 3);
      await r.run().emit({ type: 'warning', message: 'Reconnecting…' });
    }
    assert.equal(r.session.waitingFor, 'stalled');
  });

  it('idle for idleTimeoutMs while waiting kills the session: a finished turn is let go, a stalled agent is stopped', async () => {
    const turnEnd = await running();
    await turnEnd.run().emit(ok);
    turnEnd.clock.advance(IDLE_MS);
    assert.equal(turnEnd.session.status, 'killed');
    assert.equal(turnEnd.session.record.endReason, 'idle for 30 min');
    assert.ok(turnEnd.run().ended);
    assert.equal(turnEnd.run().killed, false);

    const stalled = await running();
    stalled.clock.advance(SAFETY_NET_MS + IDLE_MS);
    assert.equal(stalled.session.status, 'killed');
    assert.ok(stalled.run().killed);
  });

  it('a permission request waits (`permission`); "yes" allows it, anything else denies with the text', async () => {
    const r = await running();
    await r.run().emit({ type: 'permission', requestId: 'p1', tool: 'Bash', input: { command: 'ls' } });
    assert.equal(r.session.waitingFor, 'permission');
    assert.deepEqual(r.session.pendingPermission, { requestId: 'p1', tool: 'Bash', input: { command: 'ls' } });
    assert.deepEqual(r.types().slice(-2), ['permission', 'waiting']);
    assert.equal(await r.session.send('yes please', { source: 'user' }), 'answered');
    assert.equal(r.session.pendingPermission, null);
    assert.equal(r.session.waitingFor, null);

    await r.run().emit({ type: 'permission', requestId: 'p2', tool: 'Write', input: {} });
    assert.equal(await r.session.send('not that file', { source: 'user' }), 'answered');
    assert.deepEqual(r.run().answers, [
      { requestId: 'p1', decision: { allow: true } },
      { requestId: 'p2', decision: { allow: false, message: 'not that file' } },
    ]);
    assert.deepEqual(r.run().sent, [], 'answers are not sent as messages');
    const message = r.signals.at(-1);
    assert.equal(message?.type === 'message' ? message.answered : undefined, true);
  });

  it('send with interrupt stops the current turn first; send to an ended session throws', async () => {
    const r = await running();
    await r.session.send('change course', { source: 'user', interrupt: true });
    assert.equal(r.run().interrupts, 1);
    assert.deepEqual(r.run().sent, ['change course']);
    r.session.kill();
    await assert.rejects(r.session.send('late', { source: 'user' }), /is killed/);
  });

  it('kill ends an active session once (`killed`, with reason and chat), stops the agent, and ignores its exit', async () => {
    const r = await running();
    assert.equal(r.session.kill('enough', 'web|x'), true);
    assert.equal(r.session.status, 'killed');
    assert.equal(r.session.record.endReason, 'enough');
    assert.deepEqual(r.signals.at(-1), { type: 'ended', session: r.session, via: 'web|x' });
    assert.ok(r.run().killed);
    assert.equal(r.session.kill(), false);
    await r.session.runDone;
    assert.equal(r.session.status, 'killed');
    assert.deepEqual(r.statuses(), ['running', 'killed']);
  });

  it('shutdown marks an active session `interrupted` and signals `interrupted`, never `ended`', async () => {
    const r = await running();
    r.session.shutdown();
    assert.equal(r.session.status, 'interrupted');
    assert.equal(r.session.record.endReason, 'daemon stopped');
    assert.equal(r.types().at(-1), 'interrupted');
    assert.ok(!r.types().includes('ended'));
    assert.ok(r.run().killed);
    await r.session.runDone;
    assert.equal(r.session.status, 'interrupted');
  });

  it('shutdown of an ended session whose agent is still attached kills the agent and keeps the status', async () => {
    const r = await running({ multiTurn: false });
    await r.run().emit(ok);
    assert.equal(r.session.status, 'completed');
    const before = r.signals.length;
    r.session.shutdown();
    assert.ok(r.run().killed);
    assert.equal(r.session.status, 'completed');
    assert.equal(r.signals.length, before);
  });

  it('writes every change to its log and row before it signals it', async () => {
    const r = await running({ multiTurn: false });
    await r
      .run()
      .emit(
        { type: 'text', text: 'hi' },
        { type: 'tool', id: 't', name: 'Read', input: {} },
        { type: 'toolResult', id: 't', isError: false },
        ok,
      );
    const expected: Record<string, string> = {
      launched: 'user',
      running: 'status',
      output: 'output',
      tool: 'tool',
      ended: 'status',
    };
    r.signals.forEach((signal, i) => assert.equal(r.loggedBefore[i], expected[signal.type], `before ${signal.type}`));
    assert.ok(
      r.patches.some((p) => p.status === 'completed'),
      'the row was updated too',
    );
  });
});

describe('endsWithQuestion', () => {
  it('looks at the last non-empty line only', () => {
    assert.equal(endsWithQuestion('Done?\n\nYes.'), false);
    assert.equal(endsWithQuestion('Shall I?\n'), true);
    assert.equal(endsWithQuestion('Really?**'), true);
  });
});

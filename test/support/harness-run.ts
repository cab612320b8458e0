// Driving a harness run in tests (the fake agents of test/support and the real CLIs of test/contract): collect its events
// in the background and wait for one, or consume it to the end while reacting; pick events of a type; read what a fake
// agent logged about its invocations.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { HarnessEvent, Run } from '../../src/coding/harness.ts';
import { waitFor as waitUntil } from './wait-for.ts';

/** The harness event of one type. */
export type EventOf<T extends HarnessEvent['type']> = Extract<HarnessEvent, { type: T }>;

/** The events of one type, in order. */
export function ofType<T extends HarnessEvent['type']>(events: HarnessEvent[], type: T): EventOf<T>[] {
  return events.filter((e): e is EventOf<T> => e.type === type);
}

/** A run whose events are being collected. */
export interface CollectedRun {
  /** Every event so far, in order (the last is `exited` once the run has ended). */
  events: HarnessEvent[];
  /** Resolves once the run has ended and every event is in `events`. */
  done: Promise<void>;
  /** Resolves on the `count`-th event matching `predicate`; rejects, listing the events, once the run ended without it or the time is up. */
  waitFor(predicate: (e: HarnessEvent) => boolean, count?: number): Promise<HarnessEvent>;
}

/** Collects a run's events in the background; `waitFor` gives up after `timeoutMs`. */
export function collect(run: Run, timeoutMs = 10_000): CollectedRun {
  const events: HarnessEvent[] = [];
  const done = (async () => {
    for await (const event of run) events.push(event);
  })();
  async function waitFor(predicate: (e: HarnessEvent) => boolean, count = 1): Promise<HarnessEvent> {
    const found = await waitUntil(
      'an event',
      () => {
        const match = events.filter(predicate)[count - 1];
        if (match) return match;
        return events.at(-1)?.type === 'exited' ? null : undefined;
      },
      timeoutMs,
    ).catch(() => null);
    if (!found) throw new Error(`no such event; events: ${JSON.stringify(events)}`);
    return found;
  }
  return { events, done, waitFor };
}

/** The events that say what the agent did: all but `activity` and `warning`. */
export function meaningful(events: HarnessEvent[]): HarnessEvent[] {
  return events.filter((e) => e.type !== 'activity' && e.type !== 'warning');
}

/** Waits for the run's first turn, then closes the input and waits for the run to end; resolves to the time the turn ended. */
export async function runOneTurn(run: Run, c: CollectedRun): Promise<number> {
  await c.waitFor((e) => e.type === 'turnEnd');
  const endedAt = Date.now();
  run.end();
  await c.done;
  return endedAt;
}

/**
 * Waits for the run's first turn (then runs `afterFirst`, if given), sends `second` and waits for that turn, then closes the
 * input and waits for the run to end. Asserts both turns started on one backend session; returns its id.
 */
export async function runTwoTurns(run: Run, c: CollectedRun, second: string, afterFirst?: () => void): Promise<string> {
  await c.waitFor((e) => e.type === 'turnEnd');
  afterFirst?.();
  run.send(second);
  await c.waitFor((e) => e.type === 'turnEnd', 2);
  run.end();
  await c.done;
  const ids = ofType(c.events, 'started').map((e) => e.backendSessionId);
  assert.equal(ids.length, 2);
  assert.equal(ids[0], ids[1]);
  return ids[0] ?? '';
}

/** Interrupts the turn in progress and asserts it ends as `interrupted` within 2 s. */
export async function interruptTurn(run: Run, c: CollectedRun): Promise<void> {
  const t0 = Date.now();
  await run.interrupt();
  const end = await c.waitFor((e) => e.type === 'turnEnd');
  const stopMs = Date.now() - t0;
  assert.ok(stopMs < 2_000, `the interrupt is prompt (${stopMs} ms)`);
  assert.deepEqual((end as EventOf<'turnEnd'>).outcome, { ok: false, reason: 'interrupted', message: 'interrupted' });
}

/**
 * Sends `text` after an interrupted turn: asserts the next turn succeeds on the run's first backend session, then ends
 * the run (exit 0).
 */
export async function resumeAfterInterrupt(run: Run, c: CollectedRun, text: string): Promise<void> {
  run.send(text);
  const next = await c.waitFor((e) => e.type === 'turnEnd', 2);
  assert.deepEqual((next as EventOf<'turnEnd'>).outcome, { ok: true });
  const started = ofType(c.events, 'started');
  assert.equal(started[1]?.backendSessionId, started[0]?.backendSessionId);
  await endRun(run, c);
}

/** Closes the run's input and asserts the run then exits with code 0. */
export async function endRun(run: Run, c: CollectedRun): Promise<void> {
  run.end();
  await c.done;
  assert.deepEqual(c.events.at(-1), { type: 'exited', code: 0 });
}

/** Ends the run's input after a turn: the run then exits. The default reaction of `drive`. */
export function endAfterTurn(event: HarnessEvent, run: Run): void {
  if (event.type === 'turnEnd') run.end();
}

/**
 * Consumes a run to its end, letting `react` steer it after each event; returns every event (the last is `exited`).
 * A failure in `react` kills the run and is rethrown.
 */
export async function drive(
  run: Run,
  react: (event: HarnessEvent, run: Run) => void | Promise<void> = endAfterTurn,
): Promise<HarnessEvent[]> {
  const events: HarnessEvent[] = [];
  try {
    for await (const event of run) {
      events.push(event);
      await react(event, run);
    }
  } catch (error) {
    run.kill();
    throw error;
  }
  return events;
}

/** One invocation of a fake agent, as fake-scenario.mjs logs it to $FAKE_AGENT_LOG. */
export interface FakeInvocation {
  argv: string[];
  env: Record<string, string>;
}

/** The invocations a fake agent logged to `log`, in order (none when the file does not exist). */
export function readInvocations(log: string): FakeInvocation[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as FakeInvocation);
}

/** The `exited` event that ends `events`; asserts it is the last event and the only one of its type. */
export function exitedOf(events: HarnessEvent[]): EventOf<'exited'> {
  const last = events.at(-1);
  assert.equal(last?.type, 'exited', `last event is exited: ${JSON.stringify(events.slice(-3))}`);
  assert.equal(ofType(events, 'exited').length, 1);
  return last;
}

/** Asserts the run's first turn failed as an API error with this HTTP status and a message matching `message`. */
export function assertApiErrorTurn(events: HarnessEvent[], status: number, message: RegExp): void {
  const [end] = ofType(events, 'turnEnd');
  assert.ok(end, `a turnEnd: ${JSON.stringify(events)}`);
  assert.equal(end.outcome.ok, false);
  if (!end.outcome.ok) {
    assert.equal(end.outcome.reason, 'api_error');
    assert.equal(end.outcome.apiErrorStatus, status);
    assert.match(end.outcome.message, message);
  }
}

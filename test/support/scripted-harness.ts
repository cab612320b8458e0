import { EventQueue } from '../../src/coding/event-queue.ts';
import type {
  Harness,
  HarnessCheck,
  HarnessEvent,
  PermissionDecision,
  Run,
  RunSpec,
} from '../../src/coding/harness.ts';
import type { HarnessName } from '../../src/core/config.ts';

/** A Run whose events the test pushes by hand; it records every control call. */
export class ScriptedRun implements Run {
  readonly spec: RunSpec;
  readonly sent: string[] = [];
  readonly answers: { requestId: string; decision: PermissionDecision }[] = [];
  interrupts = 0;
  ended = false;
  killed = false;
  readonly pid = undefined;
  #queue = new EventQueue<HarnessEvent>();

  constructor(spec: RunSpec) {
    this.spec = spec;
  }

  /** Delivers events to the session, then waits for it to process them. */
  async emit(...events: HarnessEvent[]): Promise<void> {
    for (const event of events) this.#queue.push(event);
    if (events.some((e) => e.type === 'exited')) this.#queue.close();
    await new Promise((resolve) => setImmediate(resolve));
  }

  [Symbol.asyncIterator](): AsyncIterator<HarnessEvent> {
    return this.#queue[Symbol.asyncIterator]();
  }

  send(text: string): void {
    this.sent.push(text);
  }

  answerPermission(requestId: string, decision: PermissionDecision): void {
    this.answers.push({ requestId, decision });
  }

  async interrupt(): Promise<void> {
    this.interrupts += 1;
  }

  end(): void {
    this.ended = true;
  }

  kill(): void {
    this.killed = true;
    this.#queue.push({ type: 'exited', code: null, error: 'killed' });
    this.#queue.close();
  }
}

/** A Harness for unit tests: every start() makes a ScriptedRun the test drives. */
export class ScriptedHarness implements Harness {
  readonly name: HarnessName;
  readonly supportsFork: boolean;
  readonly asksPermission = true;
  readonly runs: ScriptedRun[] = [];

  constructor(name: HarnessName = 'claude', supportsFork = true) {
    this.name = name;
    this.supportsFork = supportsFork;
  }

  start(spec: RunSpec): Run {
    const run = new ScriptedRun(spec);
    this.runs.push(run);
    return run;
  }

  /** The most recent run. */
  get last(): ScriptedRun {
    const run = this.runs[this.runs.length - 1];
    if (!run) throw new Error('no run started');
    return run;
  }

  async check(): Promise<HarnessCheck> {
    return { ok: true, executable: 'scripted' };
  }
}

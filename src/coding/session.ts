import type { Clock } from '../core/clock.ts';
import { conflict, errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { roundUsd } from '../core/usd.ts';
import type { ChannelView, SessionPatch, SessionStatus, StoredSession } from '../store/coding-session-types.ts';
import { isActiveStatus } from '../store/coding-session-types.ts';
import { explainCredentialFailure } from './credentials.ts';
import type { Harness, HarnessEvent, PermissionDecision, Run } from './harness.ts';
import { OutputBuffer } from './output-buffer.ts';
import type { PermissionGate } from './permission-gate.ts';
import type { SessionLogEntry, UserMessageSource, WaitingReason } from './session-log.ts';
import type { PendingPermission } from './session-permissions.ts';
import { decisionOfText, permissionAnswerEntry, SessionPermissions } from './session-permissions.ts';
import { consumeRun, runSpecOf } from './session-run.ts';
import type { SessionSignal } from './session-signal.ts';
import { idleText, outputPreview, permissionPreview } from './session-text.ts';
import { SessionTurn } from './session-turn.ts';
import { SessionWaiting } from './session-waiting.ts';
import type { SessionPersistence } from './session-writes.ts';
import { SessionWrites } from './session-writes.ts';

export type { PendingPermission } from './session-permissions.ts';
export type { SessionSignal } from './session-signal.ts';
export { endsWithQuestion } from './session-text.ts';
export type { SessionPersistence } from './session-writes.ts';

/** What a Session is built with: its harness, clock, logger, where it writes, its timings, gate and signal sink. */
export interface SessionDeps {
  harness: Harness;
  clock: Clock;
  logger: Logger;
  persistence: SessionPersistence;
  /** Silence (with no tool call running) this long counts as waiting for input. */
  safetyNetMs: number;
  /** A multi-turn session left waiting this long is ended. */
  idleTimeoutMs: number;
  /** Where permission requests go (approvals); without it the next message sent into the session answers them. */
  permissions?: PermissionGate;
  onSignal: (signal: SessionSignal) => void;
}

/**
 * One coding session over any harness: consumes the run's events, keeps the 200-block output buffer, and moves
 * through starting → running → completed | failed | killed (| interrupted), waiting for input on the way. The state
 * machine is here; its parts each hold one job: the writes (`session-writes.ts`), the waiting reason and its timers
 * (`session-waiting.ts`, `session-timers.ts`), the permission requests (`session-permissions.ts`), the turn's content
 * (`session-turn.ts`) and the run's events (`session-run.ts`).
 */
export class Session {
  readonly #record: StoredSession;
  readonly #deps: SessionDeps;
  readonly #writes: SessionWrites;
  readonly #waiting: SessionWaiting;
  readonly #permissions: SessionPermissions;
  readonly #turn: SessionTurn;
  #run: Run | null = null;
  /** Settles once the current (or last) run's events are all handled: its exit is in the log. */
  #runDone: Promise<void> = Promise.resolve();
  readonly output = new OutputBuffer();
  #killRequested = false;
  #runCostBase = 0;
  #runStartSeq = 0;
  #runStartedAt = 0;

  constructor(record: StoredSession, deps: SessionDeps) {
    this.#record = record;
    this.#deps = deps;
    this.#writes = new SessionWrites(record, deps.persistence);
    this.#waiting = new SessionWaiting({
      clock: deps.clock,
      safetyNetMs: deps.safetyNetMs,
      idleTimeoutMs: deps.idleTimeoutMs,
      onSilence: () => this.#onSilence(),
      onIdle: (reason) => this.#onIdle(reason),
    });
    this.#permissions = new SessionPermissions({
      gate: deps.permissions,
      logger: deps.logger,
      isActive: () => this.isActive,
      onStored: () => this.#enterWaiting('permission'),
      onDecided: (requestId, decision, decidedBy) => this.#answer(requestId, decision, decidedBy),
    });
    this.#turn = new SessionTurn({
      sessionId: record.id,
      output: this.output,
      logger: deps.logger,
      write: (entry) => this.#write(entry),
      emit: (signal) => this.#deps.onSignal({ ...signal, session: this }),
    });
  }

  get record(): Readonly<StoredSession> {
    return this.#record;
  }
  get id(): string {
    return this.#record.id;
  }
  get name(): string {
    return this.#record.name;
  }
  get status(): SessionStatus {
    return this.#record.status;
  }
  get isActive(): boolean {
    return isActiveStatus(this.#record.status);
  }
  /** The tool call waiting for the user's approval, if any. */
  get pendingPermission(): Readonly<PendingPermission> | null {
    return this.#permissions.pending;
  }
  /** Why the session waits for input, or null while it works. */
  get waitingFor(): WaitingReason | null {
    return this.#waiting.reason;
  }
  get openToolCalls(): number {
    return this.#turn.openToolCalls;
  }
  get malformedLines(): number {
    return this.#turn.malformedLines;
  }
  /** Cost added since the current run started (metrics record it once per run). */
  get runCostUsd(): number {
    return roundUsd(this.#record.costUsd - this.#runCostBase);
  }
  get pid(): number | undefined {
    return this.#run?.pid;
  }
  /** Log seq of the record that started the current run (follow a run from here). */
  get runStartSeq(): number {
    return this.#runStartSeq;
  }
  /** Clock time the current (or last) run started; 0 before the first start. */
  get runStartedAt(): number {
    return this.#runStartedAt;
  }
  /**
   * Resolves once the agent run has reported its exit and everything it sent is handled (at once when there is no
   * run): from then on the session writes nothing more to its log until it is started again.
   */
  get runDone(): Promise<void> {
    return this.#runDone.then(() => this.#writes.stored);
  }
  /** Resolves once every change to the stored row made so far committed (rejects with the first write that failed). */
  get stored(): Promise<void> {
    return this.#writes.stored;
  }
  /** True while the agent run has not reported its exit (its log may still grow). */
  get attached(): boolean {
    return this.#run !== null;
  }

  /**
   * Starts the agent run described by the record's spec. `kind` says whether this is a launch or a resume; `via` is
   * the chat the command came from, if any (passed on in the `launched` signal).
   */
  start(kind: 'launch' | 'resume', options: { via?: string } = {}): void {
    const spec = this.#record.spec;
    this.#runCostBase = this.#record.costUsd;
    this.#runStartedAt = this.#deps.clock.now();
    this.#runStartSeq = this.#write({ type: 'run', kind, prompt: spec.prompt, spec }).seq;
    this.#write({ type: 'user', text: spec.prompt, source: kind });
    let run: Run;
    try {
      run = this.#deps.harness.start(runSpecOf(this.#record));
    } catch (error) {
      this.#finish('failed', { error: `could not start the agent: ${errorMessage(error)}` });
      return;
    }
    this.#run = run;
    this.#deps.onSignal({ type: 'launched', session: this, kind, ...(options.via ? { via: options.via } : {}) });
    this.#armSafetyNet();
    this.#runDone = consumeRun(
      run,
      (event) => this.#handle(event),
      () => this.#run === run && this.isActive,
    );
  }

  /**
   * Sends a user message. Without a permission gate, a pending permission request is answered by it instead
   * ("yes"/"allow" allows, anything else denies with the text as the reason); with one, the manager decides the stored
   * approval and a request not yet stored is a conflict. With `interrupt`, the current turn is stopped first.
   */
  async send(
    text: string,
    options: { source: UserMessageSource; interrupt?: boolean; via?: string },
  ): Promise<'sent' | 'answered'> {
    const run = this.#run;
    if (!run || !this.isActive) throw new Error(`session ${this.name} is ${this.status}`);
    if (this.#permissions.pending && this.#permissions.gated) {
      // Its approval is being stored this very moment (the manager decides stored ones): nothing answers it but that.
      throw conflict(`session ${this.name}: its permission request is being recorded; answer it in a moment`);
    }
    const answered = this.#permissions.take();
    if (answered) {
      const decision = decisionOfText(text);
      this.#write(permissionAnswerEntry(answered.requestId, decision));
      this.#signalMessage(text, options, true);
      this.#resumeWork();
      run.answerPermission(answered.requestId, decision);
      return 'answered';
    }
    this.#write({ type: 'user', text, source: options.source, ...(options.interrupt ? { interrupt: true } : {}) });
    this.#signalMessage(text, options, false);
    this.#resumeWork();
    if (options.interrupt) await run.interrupt();
    run.send(text);
    return 'sent';
  }

  /** Kills an active session (`via`: the chat the kill command came from, if any). Returns false when it had already ended. */
  kill(reason = 'killed by user', via?: string): boolean {
    if (!this.isActive) return false;
    this.#killRequested = true;
    const run = this.#run;
    this.#finish('killed', { endReason: reason }, { ...(via ? { via } : {}) });
    run?.kill();
    return true;
  }

  /**
   * Daemon shutdown: stops the agent and marks the session interrupted; signals `interrupted`, not `ended`. A session
   * that has already ended but whose agent has not yet exited (a single turn's agent told there is no more input) has
   * that agent killed, its status kept. Await `runDone` for the agent's exit to be handled.
   */
  shutdown(): void {
    if (!this.isActive) {
      this.#run?.kill();
      return;
    }
    this.#killRequested = true;
    const run = this.#run;
    this.#finish('interrupted', { endReason: 'daemon stopped' }, { announce: false });
    this.#deps.onSignal({ type: 'interrupted', session: this });
    run?.kill();
  }

  /** Last `lines` output blocks (all kept blocks when omitted). */
  lastOutput(lines?: number): string[] {
    return this.output.last(lines).map((b) => b.text);
  }

  /** The preview shown with waiting and completion events: last 5 blocks, at most 500 chars (tail). */
  preview(): string {
    return outputPreview(this.output);
  }

  /**
   * Records a channel's view (streaming live or not, last seq seen): writes a `foreground` record, then signals `view`.
   * Resolves once the row's change committed.
   */
  setView(channel: string, view: ChannelView): Promise<void> {
    const stored = this.#writes.setView(channel, view);
    this.#deps.onSignal({ type: 'view', session: this, channel, on: view.on });
    return stored;
  }

  /** Moves a channel's "seen up to" mark without changing whether it streams (bookkeeping; no log record, no signal). */
  markSeen(channel: string, seenSeq: number): void {
    this.#writes.markSeen(channel, seenSeq);
  }

  /**
   * Updates stored fields that are not part of the lifecycle (foreground views, auto-respond counter, origin); the
   * record changes at once, the returned promise resolves once the row's change committed.
   */
  patch(patch: Pick<SessionPatch, 'foreground' | 'autoResponds' | 'originChannel'>): Promise<void> {
    return this.#persist(patch);
  }

  #handle(event: HarnessEvent): void {
    if (!this.isActive && event.type !== 'exited') return;
    switch (event.type) {
      case 'started':
        this.#onStarted(event.backendSessionId, event.model);
        break;
      case 'text':
        this.#onContent();
        this.#turn.text(event.text);
        break;
      case 'tool':
        this.#onContent();
        this.#turn.tool(event);
        break;
      case 'toolResult':
        this.#turn.toolResult(event);
        break;
      case 'question':
        this.#onContent();
        this.#turn.question(event.text);
        break;
      case 'permission':
        this.#onPermission(event);
        break;
      case 'turnEnd':
        this.#onTurnEnd(event);
        break;
      case 'activity':
        this.#onActivity();
        break;
      case 'warning':
        this.#turn.warning(event);
        // A warning is not progress: an agent that only repeats one (Codex's endless "Reconnecting…" when its model
        // server is unreachable) must still trip the safety net, so people hear it has gone quiet.
        return;
      case 'exited':
        this.#onExited(event.code, event.error);
        return;
    }
    this.#armSafetyNet();
  }

  #onStarted(backendSessionId: string, model: string | undefined): void {
    const patch: SessionPatch = {};
    if (backendSessionId !== this.#record.backendSessionId) {
      this.#write({ type: 'backend', backendSessionId, ...(model ? { model } : {}) });
      patch.backendSessionId = backendSessionId;
    }
    if (this.#run?.pid !== undefined && this.#run.pid !== this.#record.pid) patch.pid = this.#run.pid;
    if (model && !this.#record.model) patch.model = model;
    void this.#persist(patch);
    this.#toRunning();
  }

  /**
   * The agent asks to use a tool: recorded, then handed to the gate, which decides it by a rule (answered at once) or
   * stores it for a person (the session then waits for `permission`). Without a gate the session waits at once.
   */
  #onPermission(event: HarnessEvent & { type: 'permission' }): void {
    this.#onContent();
    const { requestId, tool, input } = event;
    this.#permissions.open(requestId, tool, input);
    this.#write({ type: 'permission', requestId, tool, input });
    this.#deps.onSignal({ type: 'permission', session: this, requestId, tool, input });
    if (!this.#permissions.gated) {
      this.#enterWaiting('permission');
      return;
    }
    this.#permissions.ask({
      sessionId: this.id,
      sessionName: this.name,
      workdir: this.#record.workdir,
      requestId,
      tool,
      input,
    });
  }

  /**
   * Answers the pending permission request `requestId` (a gate's decision): recorded in the log with who decided, then
   * passed to the agent, which goes on working. Ignored when that request is no longer pending.
   */
  #answer(requestId: string, decision: PermissionDecision, decidedBy: string): void {
    const run = this.#run;
    if (!run || !this.isActive || !this.#permissions.take(requestId)) return;
    this.#write(permissionAnswerEntry(requestId, decision, decidedBy));
    this.#turn.answered();
    this.#resumeWork();
    run.answerPermission(requestId, decision);
  }

  #toRunning(): void {
    if (this.#record.status !== 'starting') return;
    this.#setStatus('running');
    this.#deps.onSignal({ type: 'running', session: this });
  }

  /** New content after a false "stalled" alarm means the agent was working after all. */
  #onContent(): void {
    this.#toRunning();
    this.#waiting.content();
  }

  /**
   * A sign of life with nothing to show (stream deltas of a thinking model) after a "stalled" alarm: the agent is not
   * idle, so its idle clock stops; the alarm is not repeated if it goes quiet again (the safety net re-arms).
   */
  #onActivity(): void {
    this.#waiting.activity();
  }

  #onTurnEnd(event: HarnessEvent & { type: 'turnEnd' }): void {
    // A turn end after a "stalled" alarm is news of its own (the agent was working after all).
    this.#onContent();
    const totalCostUsd = this.#turn.writeEnd(event, this.#record.costUsd);
    void this.#persist({ costUsd: totalCostUsd });
    const asked = this.#turn.end();
    const outcome = event.outcome;
    if (outcome.ok) {
      if (!this.#record.spec.multiTurn) {
        const run = this.#run;
        this.#finish('completed', { endReason: 'single turn finished' });
        run?.end();
        return;
      }
      this.#enterWaiting(asked ? 'question' : 'turn-end');
      return;
    }
    if (outcome.reason === 'interrupted') return;
    if (outcome.reason === 'budget_exhausted') {
      void this.#persist({ budgetExhausted: true });
      this.#deps.onSignal({ type: 'budgetExhausted', session: this });
    }
    const run = this.#run;
    this.#finish('failed', { error: outcome.message, endReason: outcome.reason });
    run?.end();
  }

  #onExited(code: number | null, error: string | undefined): void {
    this.#write({ type: 'exited', code, ...(error ? { error } : {}) });
    this.#run = null;
    if (!this.isActive || this.#killRequested) return;
    if (error || (code !== 0 && code !== null)) {
      this.#finish('failed', { error: error ?? `the agent exited with code ${code}` });
    } else if (this.#waiting.reason !== null) {
      this.#finish('completed', { endReason: 'agent exited' });
    } else {
      this.#finish('failed', { error: 'the agent exited before finishing its turn' });
    }
  }

  #enterWaiting(reason: WaitingReason): void {
    if (!this.#waiting.enter(reason)) return;
    const preview = reason === 'permission' ? permissionPreview(this.preview()) : this.preview();
    this.#write({ type: 'waiting', reason, preview });
    this.#deps.onSignal({ type: 'waiting', session: this, reason, preview });
  }

  #signalMessage(text: string, options: { source: UserMessageSource; via?: string }, answered: boolean): void {
    this.#deps.onSignal({
      type: 'message',
      session: this,
      text,
      source: options.source,
      answered,
      ...(options.via ? { via: options.via } : {}),
    });
  }

  /** A user message arrived: the session is working again. */
  #resumeWork(): void {
    this.#waiting.resume();
    this.#armSafetyNet();
  }

  /**
   * Left waiting for idleTimeoutMs: the session is killed (it did not finish on its own). An agent whose turn is over is
   * let go by closing its input; one still inside a turn (silent, or waiting for a permission answer) is stopped.
   */
  #onIdle(waiting: WaitingReason | null): void {
    if (!this.isActive || waiting === null) return;
    const run = this.#run;
    this.#killRequested = true;
    this.#finish('killed', { endReason: `idle for ${idleText(this.#deps.idleTimeoutMs)}` });
    switch (waiting) {
      case 'turn-end':
      case 'question':
        run?.end();
        return;
      case 'stalled':
      case 'permission':
        run?.kill();
        return;
    }
  }

  /** (Re)starts the safety net while the session runs with nothing open: no waiting, tool call or permission request. */
  #armSafetyNet(): void {
    const open = this.#turn.openToolCalls > 0 || this.#permissions.pending !== null;
    this.#waiting.armSafetyNet(this.#record.status === 'running' && !open);
  }

  /** The safety net ran out: silence outside a tool call is `stalled`. */
  #onSilence(): void {
    if (this.isActive && this.#turn.openToolCalls === 0 && this.#waiting.reason === null) this.#enterWaiting('stalled');
  }

  #finish(
    status: SessionStatus,
    details: { error?: string; endReason?: string },
    options: { announce?: boolean; via?: string } = {},
  ): void {
    if (!this.isActive) return;
    this.#waiting.end();
    this.#permissions.clear();
    if (status === 'failed' && details.error)
      details = { ...details, error: explainCredentialFailure(this.#deps.harness.name, details.error) };
    const completedAt = this.#deps.clock.now();
    this.#write({ type: 'status', status, ...details });
    void this.#persist({
      status,
      completedAt,
      error: details.error ?? null,
      endReason: details.endReason ?? null,
      updatedAt: completedAt,
      pid: null,
    });
    if (options.announce ?? true)
      this.#deps.onSignal({ type: 'ended', session: this, ...(options.via ? { via: options.via } : {}) });
  }

  #setStatus(status: SessionStatus): void {
    this.#write({ type: 'status', status });
    void this.#persist({ status, updatedAt: this.#deps.clock.now() });
  }

  #write(entry: SessionLogEntry): { seq: number } {
    return this.#writes.log(entry);
  }

  /** See `SessionWrites.persist`: the record changes at once; tracked in `stored`, which `runDone` and the manager await. */
  #persist(patch: SessionPatch): Promise<void> {
    return this.#writes.persist(patch);
  }
}

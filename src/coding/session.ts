import type { Clock, Timer } from '../core/clock.ts';
import { conflict, errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { roundUsd } from '../core/usd.ts';
import type { Approval } from '../store/approvals.ts';
import type { ChannelView, SessionPatch, SessionStatus, StoredSession } from '../store/coding-session-types.ts';
import { isActiveStatus } from '../store/coding-session-types.ts';
import { explainCredentialFailure } from './credentials.ts';
import { formatDuration } from './format.ts';
import type { Harness, HarnessEvent, PermissionDecision, Run } from './harness.ts';
import { OutputBuffer } from './output-buffer.ts';
import type { PermissionGate } from './permission-gate.ts';
import type { SessionLogEntry, UserMessageSource, WaitingReason } from './session-log.ts';

/**
 * What a Session tells its manager; discriminated by `type`. Each is already in the log when it is signalled.
 * `via` is the chat channel string a person typed the command in that caused the signal: that chat already shows the
 * command's own reply, so notifiers need not repeat it there.
 */
export type SessionSignal =
  /** A run started (a launch or a resume), after its `run` and `user` records. */
  | { type: 'launched'; session: Session; kind: 'launch' | 'resume'; via?: string }
  | { type: 'output'; session: Session; text: string; seq: number }
  | { type: 'tool'; session: Session; name: string; input: unknown }
  /** The agent explicitly asked the user something (its `waiting` with reason `question` follows at turn end). */
  | { type: 'question'; session: Session; text: string }
  /** The agent asks to use a tool (its `waiting` with reason `permission` follows at once). */
  | { type: 'permission'; session: Session; requestId: string; tool: string; input: unknown }
  /** A message was sent into the running session; `answered` when it answered a pending permission request. */
  | { type: 'message'; session: Session; text: string; source: UserMessageSource; answered: boolean; via?: string }
  | { type: 'waiting'; session: Session; reason: WaitingReason; preview: string }
  | { type: 'budgetExhausted'; session: Session }
  | { type: 'running'; session: Session }
  | { type: 'ended'; session: Session; via?: string }
  /** A chat channel started (`on`) or stopped streaming the session live (claude_fg / claude_bg). */
  | { type: 'view'; session: Session; channel: string; on: boolean }
  /** The daemon is stopping: the session was marked interrupted (no `ended` follows). */
  | { type: 'interrupted'; session: Session };

/** A tool call the agent asked permission for, still unanswered. */
export interface PendingPermission {
  requestId: string;
  tool: string;
  input: unknown;
  /** The approval a person is asked to decide, once the gate stored it (absent without a gate, or while a rule looks). */
  approval?: Approval;
}

/** Where a Session writes: its log (append-before-announce) and its row. */
export interface SessionPersistence {
  log(entry: SessionLogEntry): { seq: number };
  /** Writes the patch to the row; resolves once it committed. */
  update(patch: SessionPatch): Promise<void>;
}

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

const PREVIEW_BLOCKS = 5;
const PREVIEW_CHARS = 500;

/**
 * One coding session over any harness: consumes the run's events, keeps the 200-block output buffer, runs the idle
 * and safety-net timers, and moves through starting → running → completed | failed | killed (| interrupted).
 */
export class Session {
  #record: StoredSession;
  #deps: SessionDeps;
  #run: Run | null = null;
  /** Settles once the current (or last) run's events are all handled: its exit is in the log. */
  #runDone: Promise<void> = Promise.resolve();
  /** Settles once every row write issued so far committed (rejects with the first that failed). */
  #stored: Promise<void> = Promise.resolve();
  readonly output = new OutputBuffer();
  #openTools = new Set<string>();
  #pendingPermission: PendingPermission | null = null;
  #waiting: WaitingReason | null = null;
  #waitingFired = false;
  #askedThisTurn = false;
  #lastText = '';
  #safetyNet: Timer | null = null;
  #idleTimer: Timer | null = null;
  #killRequested = false;
  #runCostBase = 0;
  #runStartSeq = 0;
  #runStartedAt = 0;
  #malformed = 0;

  constructor(record: StoredSession, deps: SessionDeps) {
    this.#record = record;
    this.#deps = deps;
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
    return this.#pendingPermission;
  }
  /** Why the session waits for input, or null while it works. */
  get waitingFor(): WaitingReason | null {
    return this.#waiting;
  }
  get openToolCalls(): number {
    return this.#openTools.size;
  }
  get malformedLines(): number {
    return this.#malformed;
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
    return this.#runDone.then(() => this.#stored);
  }
  /** Resolves once every change to the stored row made so far committed (rejects with the first write that failed). */
  get stored(): Promise<void> {
    return this.#stored;
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
      run = this.#deps.harness.start({
        sessionId: this.#record.id,
        prompt: spec.prompt,
        workdir: this.#record.workdir,
        permissionMode: spec.permissionMode,
        maxBudgetUsd: spec.maxBudgetUsd,
        ...(spec.model ? { model: spec.model } : {}),
        ...(spec.systemPrompt ? { systemPrompt: spec.systemPrompt } : {}),
        ...(spec.allowedTools ? { allowedTools: spec.allowedTools } : {}),
        ...(spec.resumeBackendId ? { resumeBackendId: spec.resumeBackendId, forkSession: spec.forkSession } : {}),
      });
    } catch (error) {
      this.#finish('failed', { error: `could not start the agent: ${errorMessage(error)}` });
      return;
    }
    this.#run = run;
    this.#deps.onSignal({ type: 'launched', session: this, kind, ...(options.via ? { via: options.via } : {}) });
    this.#armSafetyNet();
    this.#runDone = this.#consume(run);
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
    if (this.#pendingPermission && this.#deps.permissions) {
      // Its approval is being stored this very moment (the manager decides stored ones): nothing answers it but that.
      throw conflict(`session ${this.name}: its permission request is being recorded; answer it in a moment`);
    }
    if (this.#pendingPermission) {
      const { requestId } = this.#pendingPermission;
      const allow = /^\s*(y|yes|allow|approve|ok|okay)\b/i.test(text);
      this.#pendingPermission = null;
      this.#write({ type: 'permissionAnswer', requestId, allow, ...(allow ? {} : { message: text }) });
      this.#signalMessage(text, options, true);
      this.#resumeWork();
      run.answerPermission(requestId, allow ? { allow: true } : { allow: false, message: text });
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
    const text = this.lastOutput(PREVIEW_BLOCKS).join('\n').trim();
    return text.length > PREVIEW_CHARS ? `…${text.slice(-PREVIEW_CHARS)}` : text;
  }

  /**
   * Records a channel's view (streaming live or not, last seq seen): writes a `foreground` record, then signals `view`.
   * Resolves once the row's change committed.
   */
  setView(channel: string, view: ChannelView): Promise<void> {
    this.#write({ type: 'foreground', channel, on: view.on });
    const stored = this.#persist({ foreground: { ...this.#record.foreground, [channel]: view } });
    this.#deps.onSignal({ type: 'view', session: this, channel, on: view.on });
    return stored;
  }

  /** Moves a channel's "seen up to" mark without changing whether it streams (bookkeeping; no log record, no signal). */
  markSeen(channel: string, seenSeq: number): void {
    const view = this.#record.foreground[channel];
    if (!view || view.seenSeq === seenSeq) return;
    void this.#persist({ foreground: { ...this.#record.foreground, [channel]: { ...view, seenSeq } } });
  }

  /**
   * Updates stored fields that are not part of the lifecycle (foreground views, auto-respond counter, origin); the
   * record changes at once, the returned promise resolves once the row's change committed.
   */
  patch(patch: Pick<SessionPatch, 'foreground' | 'autoResponds' | 'originChannel'>): Promise<void> {
    return this.#persist(patch);
  }

  async #consume(run: Run): Promise<void> {
    try {
      for await (const event of run) this.#handle(event);
    } catch (error) {
      this.#handle({ type: 'exited', code: null, error: errorMessage(error) });
    }
    if (this.#run === run && this.isActive) {
      this.#handle({ type: 'exited', code: null, error: 'the agent run ended without reporting an exit' });
    }
  }

  #handle(event: HarnessEvent): void {
    if (!this.isActive && event.type !== 'exited') return;
    switch (event.type) {
      case 'started':
        this.#onStarted(event.backendSessionId, event.model);
        break;
      case 'text':
        this.#onContent();
        this.#lastText = event.text;
        {
          const { seq } = this.#write({ type: 'output', text: event.text });
          this.output.push(seq, event.text);
          this.#deps.onSignal({ type: 'output', session: this, text: event.text, seq });
        }
        break;
      case 'tool':
        this.#onContent();
        this.#openTools.add(event.id);
        this.#write({ type: 'tool', id: event.id, name: event.name, input: event.input });
        this.#deps.onSignal({ type: 'tool', session: this, name: event.name, input: event.input });
        break;
      case 'toolResult':
        this.#openTools.delete(event.id);
        this.#write({
          type: 'toolResult',
          id: event.id,
          isError: event.isError,
          ...(event.output !== undefined ? { output: event.output } : {}),
        });
        break;
      case 'question':
        this.#onContent();
        this.#askedThisTurn = true;
        this.#write({ type: 'question', text: event.text });
        this.#deps.onSignal({ type: 'question', session: this, text: event.text });
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
        if (event.malformed) this.#malformed += 1;
        this.#write({ type: 'warning', message: event.message, ...(event.malformed ? { malformed: true } : {}) });
        this.#deps.logger.warn({ session: this.id, malformed: event.malformed ?? false }, event.message);
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
    this.#pendingPermission = { requestId, tool, input };
    this.#write({ type: 'permission', requestId, tool, input });
    this.#deps.onSignal({ type: 'permission', session: this, requestId, tool, input });
    const gate = this.#deps.permissions;
    if (!gate) {
      this.#enterWaiting('permission');
      return;
    }
    const ask = { sessionId: this.id, sessionName: this.name, workdir: this.#record.workdir, requestId, tool, input };
    gate
      .ask(ask, (decision, approval) => this.#answer(requestId, decision, approval.decidedBy ?? 'unknown'))
      .then((approval) => {
        const pending = this.#pendingPermission;
        if (approval.status !== 'pending' || pending?.requestId !== requestId || !this.isActive) return;
        pending.approval = approval;
        this.#enterWaiting('permission');
      })
      .catch((error: unknown) => {
        this.#deps.logger.error({ session: this.id, err: errorMessage(error) }, 'recording an approval request failed');
        this.#answer(requestId, { allow: false, message: 'The approval request could not be recorded.' }, 'error');
      });
  }

  /**
   * Answers the pending permission request `requestId` (a gate's decision): recorded in the log with who decided, then
   * passed to the agent, which goes on working. Ignored when that request is no longer pending.
   */
  #answer(requestId: string, decision: PermissionDecision, decidedBy: string): void {
    const run = this.#run;
    if (this.#pendingPermission?.requestId !== requestId || !run || !this.isActive) return;
    this.#pendingPermission = null;
    this.#write({
      type: 'permissionAnswer',
      requestId,
      allow: decision.allow,
      ...(decision.allow ? {} : { message: decision.message }),
      decidedBy,
    });
    // An answered question is not a question left open at the turn's end.
    this.#askedThisTurn = false;
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
    // `null` with the notice fired: a stall the agent's activity already broke (see #onActivity).
    if (this.#waiting === 'stalled' || (this.#waiting === null && this.#waitingFired)) {
      this.#waiting = null;
      this.#waitingFired = false;
      this.#cancelIdleTimer();
    }
  }

  /**
   * A sign of life with nothing to show (stream deltas of a thinking model) after a "stalled" alarm: the agent is not
   * idle, so its idle clock stops; the alarm is not repeated if it goes quiet again (the safety net re-arms).
   */
  #onActivity(): void {
    if (this.#waiting !== 'stalled') return;
    this.#waiting = null;
    this.#cancelIdleTimer();
  }

  #onTurnEnd(event: HarnessEvent & { type: 'turnEnd' }): void {
    // A turn end after a "stalled" alarm is news of its own (the agent was working after all).
    this.#onContent();
    const costUsd = roundUsd(Math.max(0, event.costUsd));
    const totalCostUsd = roundUsd(this.#record.costUsd + costUsd);
    this.#write({
      type: 'turn',
      outcome: event.outcome,
      costUsd,
      totalCostUsd,
      ...(event.usage ? { usage: event.usage } : {}),
    });
    void this.#persist({ costUsd: totalCostUsd });
    this.#openTools.clear();
    const asked = this.#askedThisTurn || endsWithQuestion(this.#lastText);
    this.#askedThisTurn = false;
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
    } else if (this.#waiting !== null) {
      this.#finish('completed', { endReason: 'agent exited' });
    } else {
      this.#finish('failed', { error: 'the agent exited before finishing its turn' });
    }
  }

  #enterWaiting(reason: WaitingReason): void {
    this.#cancelSafetyNet();
    this.#waiting = reason;
    this.#idleTimer?.cancel();
    this.#idleTimer = this.#deps.clock.after(this.#deps.idleTimeoutMs, () => this.#onIdle());
    if (this.#waitingFired) return;
    this.#waitingFired = true;
    const preview = reason === 'permission' ? this.#permissionPreview() : this.preview();
    this.#write({ type: 'waiting', reason, preview });
    this.#deps.onSignal({ type: 'waiting', session: this, reason, preview });
  }

  #permissionPreview(): string {
    return `${this.preview()}\n(permission requested: answer yes to allow, anything else to deny)`.trim();
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
    this.#waiting = null;
    this.#waitingFired = false;
    this.#idleTimer?.cancel();
    this.#idleTimer = null;
    this.#armSafetyNet();
  }

  /**
   * Left waiting for idleTimeoutMs: the session is killed (it did not finish on its own). An agent whose turn is over is
   * let go by closing its input; one still inside a turn (silent, or waiting for a permission answer) is stopped.
   */
  #onIdle(): void {
    this.#idleTimer = null;
    const waiting = this.#waiting;
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

  #cancelIdleTimer(): void {
    this.#idleTimer?.cancel();
    this.#idleTimer = null;
  }

  #armSafetyNet(): void {
    this.#cancelSafetyNet();
    if (this.#record.status !== 'running' || this.#waiting !== null) return;
    if (this.#openTools.size > 0 || this.#pendingPermission) return;
    this.#safetyNet = this.#deps.clock.after(this.#deps.safetyNetMs, () => {
      this.#safetyNet = null;
      if (this.isActive && this.#openTools.size === 0 && this.#waiting === null) this.#enterWaiting('stalled');
    });
  }

  #cancelSafetyNet(): void {
    this.#safetyNet?.cancel();
    this.#safetyNet = null;
  }

  #finish(
    status: SessionStatus,
    details: { error?: string; endReason?: string },
    options: { announce?: boolean; via?: string } = {},
  ): void {
    if (!this.isActive) return;
    this.#cancelSafetyNet();
    this.#idleTimer?.cancel();
    this.#idleTimer = null;
    this.#waiting = null;
    this.#pendingPermission = null;
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
    return this.#deps.persistence.log(entry);
  }

  /**
   * Applies the patch to the record at once and writes it to the row; the writes commit in the order they were made
   * (see `stored`). Resolves once this one committed; a caller that does not await it still has it tracked in `stored`,
   * which `runDone` and the manager await.
   */
  #persist(patch: SessionPatch): Promise<void> {
    const keys = Object.keys(patch) as (keyof SessionPatch)[];
    if (keys.length === 0) return Promise.resolve();
    Object.assign(this.#record, patch);
    const write = this.#deps.persistence.update(patch);
    this.#stored = Promise.all([this.#stored, write]).then(() => undefined);
    return write;
  }
}

/** True when the last non-empty line of `text` ends with a question mark. */
export function endsWithQuestion(text: string): boolean {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines[lines.length - 1] ?? '';
  return /\?[)"'*_`]*$/.test(last);
}

/** The idle timeout as the end reason says it: whole minutes as "30 min", anything else (e.g. 0.2 min) as "12s". */
function idleText(ms: number): string {
  const minutes = ms / 60_000;
  return Number.isInteger(minutes) ? `${minutes} min` : formatDuration(ms);
}

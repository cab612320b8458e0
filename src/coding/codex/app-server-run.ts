// One Codex run that can ask: a long-lived `codex app-server` process (stdio JSON-RPC, see app-server-protocol.ts) holding
// one thread (started, or resumed from `resumeBackendId`), each user message one turn. The server's approval requests
// become `permission` events (app-server-events.ts) answered through `answerPermission`; a request_user_input becomes a
// `question` answered by the next `send`. Messages sent while a turn runs wait for it to end, as with `codex exec`.
import type { Logger } from '../../core/logger.ts';
import type { ExitInfo } from '../agent-process.ts';
import { AgentProcess } from '../agent-process.ts';
import { EventQueue } from '../event-queue.ts';
import type { HarnessEvent, PermissionDecision, Run } from '../harness.ts';
import { isObject } from '../json-line.ts';
import type { TurnPlan } from '../per-turn-run.ts';
import { AppServerEvents } from './app-server-events.ts';
import type { RpcId } from './app-server-protocol.ts';
import { decodeAppServerLine, textInput, threadResultSchema, turnResultSchema } from './app-server-protocol.ts';
import { AppServerRequests } from './app-server-requests.ts';
import type { CodexApprovalMode } from './codex-args.ts';
import { shorten } from './codex-events.ts';
import type { CodexUsageTracker } from './codex-usage.ts';

/** What an app-server run is started with; `plan` builds the command (it may throw: the run then exits at once). */
export interface AppServerRunOptions {
  sessionId: string;
  prompt: string;
  plan: () => TurnPlan;
  workdir: string;
  mode: CodexApprovalMode;
  model?: string;
  resumeId?: string;
  usage: CodexUsageTracker;
  killGraceMs: number;
  logger?: Logger;
}

interface Call {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

const CLIENT = { name: 'switchboard', title: 'switchboard', version: '1' };

/** The Run over `codex app-server`; see the top of this file. Never throws from the constructor. */
export class AppServerRun implements Run {
  #queue = new EventQueue<HarnessEvent>();
  #options: AppServerRunOptions;
  #events: AppServerEvents;
  #proc: AgentProcess | null = null;
  #calls = new Map<number, Call>();
  #nextId = 1;
  #threadId: string | undefined;
  #model: string | undefined;
  #turnId: string | undefined;
  /** From the first prompt (or a send) until its turn/completed. */
  #inTurn = true;
  #interruptWanted = false;
  #pending: string[] = [];
  #requests: AppServerRequests;
  #ending = false;
  #killed = false;
  #finished = false;
  /** Why the run was given up (a protocol failure), reported on `exited`. */
  #failure: string | undefined;

  constructor(options: AppServerRunOptions) {
    this.#options = options;
    this.#model = options.model;
    this.#events = new AppServerEvents({ usage: options.usage });
    this.#requests = new AppServerRequests({
      mode: options.mode,
      workdir: options.workdir,
      fileChange: (itemId) => this.#events.fileChange(itemId),
    });
    let proc: AgentProcess;
    try {
      const plan = options.plan();
      proc = new AgentProcess({
        ...plan,
        stdin: 'pipe',
        sessionId: options.sessionId,
        onLine: (line) => this.#line(line),
      });
    } catch (error) {
      this.#finish({ type: 'exited', code: null, error: errorText(error) });
      return;
    }
    this.#proc = proc;
    proc.child.stdin?.on('error', () => {
      // The server is gone (EPIPE); its exit is reported from `exited`.
    });
    void proc.exited.then((info) => this.#exited(info, proc));
    this.#open(options.prompt).catch((error: unknown) =>
      this.#fail(`could not start the Codex thread: ${errorText(error)}`),
    );
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  [Symbol.asyncIterator](): AsyncIterator<HarnessEvent> {
    return this.#queue[Symbol.asyncIterator]();
  }

  send(text: string): void {
    if (this.#finished || this.#killed) throw new Error('the run has ended');
    const answer = this.#requests.answerQuestion(text);
    if (answer) this.#write(answer);
    else if (this.#inTurn) this.#pending.push(text);
    else this.#startTurn(text);
  }

  answerPermission(requestId: string, decision: PermissionDecision): void {
    const answered = this.#requests.answer(requestId, decision);
    if (!answered) return;
    this.#write(answered.reply);
    if (!answered.steer) return;
    // The decision has no reason field: the reason reaches the model as user input on the same turn.
    this.#call('turn/steer', answered.steer).catch((error: unknown) =>
      this.#warn(`the deny reason could not be given to Codex: ${errorText(error)}`),
    );
  }

  async interrupt(): Promise<void> {
    if (!this.#inTurn || !this.#proc) return;
    if (!this.#turnId || !this.#threadId) {
      this.#interruptWanted = true;
      return;
    }
    this.#sendInterrupt(this.#threadId, this.#turnId);
  }

  end(): void {
    this.#ending = true;
    if (!this.#inTurn && this.#pending.length === 0) this.#closeInput();
  }

  kill(): void {
    if (this.#finished) return;
    this.#killed = true;
    this.#pending = [];
    if (this.#proc) this.#proc.stop(this.#options.killGraceMs);
    else this.#finish({ type: 'exited', code: null, error: 'killed' });
  }

  async #open(prompt: string): Promise<void> {
    await this.#call('initialize', { clientInfo: CLIENT, capabilities: null });
    this.#write({ method: 'initialized' });
    const { workdir, mode, model, resumeId } = this.#options;
    const settings = {
      cwd: workdir,
      approvalPolicy: mode.approvalPolicy,
      sandbox: mode.sandbox,
      ...(model ? { model } : {}),
    };
    const result = resumeId
      ? await this.#call('thread/resume', { threadId: resumeId, ...settings })
      : await this.#call('thread/start', settings);
    const thread = threadResultSchema.parse(result);
    this.#threadId = thread.thread.id;
    this.#model ??= thread.model;
    this.#options.logger?.debug(
      { session: this.#options.sessionId, thread: this.#threadId },
      'Codex app-server thread',
    );
    this.#startTurn(prompt);
  }

  #startTurn(text: string): void {
    const threadId = this.#threadId;
    if (!threadId) return;
    this.#inTurn = true;
    this.#call('turn/start', { threadId, input: textInput(text) }).then(
      (result) => {
        const parsed = turnResultSchema.safeParse(result);
        if (!parsed.success) return;
        this.#turnId ??= parsed.data.turn.id;
        if (this.#interruptWanted) this.#sendInterrupt(threadId, parsed.data.turn.id);
      },
      (error: unknown) => {
        const message = `Codex did not start the turn: ${errorText(error)}`;
        this.#emit({ type: 'turnEnd', outcome: { ok: false, reason: 'execution_error', message }, costUsd: 0 });
        this.#turnDone();
      },
    );
  }

  #sendInterrupt(threadId: string, turnId: string): void {
    this.#interruptWanted = false;
    this.#call('turn/interrupt', { threadId, turnId }).catch((error: unknown) =>
      this.#warn(`Codex did not interrupt the turn: ${errorText(error)}`),
    );
  }

  #turnDone(): void {
    this.#inTurn = false;
    this.#turnId = undefined;
    this.#interruptWanted = false;
    this.#requests.clear();
    const next = this.#pending.shift();
    if (next !== undefined) this.#startTurn(next);
    else if (this.#ending) this.#closeInput();
  }

  #line(line: string): void {
    if (!line.trim()) return;
    const decoded = decodeAppServerLine(line);
    if (!decoded.ok) {
      this.#emit({
        type: 'warning',
        malformed: true,
        message: `dropped a malformed Codex app-server line (${decoded.error}): ${shorten(line)}`,
      });
      return;
    }
    const message = decoded.message;
    switch (message.kind) {
      case 'response':
      case 'error': {
        const call = typeof message.id === 'number' ? this.#calls.get(message.id) : undefined;
        if (!call) return;
        this.#calls.delete(message.id as number);
        if (message.kind === 'response') call.resolve(message.result);
        else call.reject(new Error(`${call.method}: ${message.message}`));
        return;
      }
      case 'request':
        this.#request(message.id, message.method, message.params);
        return;
      case 'notification':
        this.#notification(message.method, message.params);
        return;
      default:
        message satisfies never;
    }
  }

  #notification(method: string, params: unknown): void {
    if (method === 'serverRequest/resolved' && isObject(params)) this.#requests.resolved(params.requestId);
    const threadId = isObject(params) && typeof params.threadId === 'string' ? params.threadId : undefined;
    if (threadId && threadId !== this.#threadId) {
      this.#emit({ type: 'activity' });
      return;
    }
    if (method === 'turn/started' && this.#threadId) {
      const turn = isObject(params) && isObject(params.turn) ? params.turn : {};
      if (typeof turn.id === 'string') this.#turnId = turn.id;
      this.#emit({ type: 'started', backendSessionId: this.#threadId, ...(this.#model ? { model: this.#model } : {}) });
      return;
    }
    const events = this.#events.notification(method, params);
    for (const event of events) this.#emit(event);
    if (events.some((e) => e.type === 'turnEnd')) this.#turnDone();
  }

  #request(rpcId: RpcId, method: string, params: unknown): void {
    const handled = this.#requests.request(rpcId, method, params);
    if (handled.reply) this.#write(handled.reply);
    for (const event of handled.events) this.#emit(event);
  }

  #call(method: string, params: unknown): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (!this.#proc || this.#finished) {
        reject(new Error(`${method}: the Codex app-server is not running`));
        return;
      }
      this.#calls.set(id, { method, resolve, reject });
      this.#write({ id, method, params });
    });
  }

  #write(message: Record<string, unknown>): void {
    const stdin = this.#proc?.child.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded) return;
    stdin.write(`${JSON.stringify(message)}\n`);
  }

  #closeInput(): void {
    this.#proc?.child.stdin?.end();
  }

  #warn(message: string): void {
    this.#emit({ type: 'warning', message });
  }

  /** A protocol failure the run cannot go on from: the server is stopped and the exit says why. */
  #fail(message: string): void {
    if (this.#finished) return;
    this.#failure ??= message;
    this.#proc?.stop(this.#options.killGraceMs);
  }

  #emit(event: HarnessEvent): void {
    this.#queue.push(event);
  }

  #finish(event: HarnessEvent & { type: 'exited' }): void {
    if (this.#finished) return;
    this.#finished = true;
    for (const call of this.#calls.values()) call.reject(new Error(`${call.method}: the Codex app-server exited`));
    this.#calls.clear();
    this.#queue.push(event);
    this.#queue.close();
  }

  #exited(info: ExitInfo, proc: AgentProcess): void {
    this.#proc = null;
    if (this.#killed) return this.#finish({ type: 'exited', code: info.code, error: 'killed' });
    if (info.spawnError)
      return this.#finish({
        type: 'exited',
        code: null,
        error: `could not start ${String(proc.child.spawnfile)}: ${info.spawnError}`,
      });
    if (this.#failure) return this.#finish({ type: 'exited', code: info.code, error: this.#failure });
    if (this.#inTurn || (info.code !== 0 && info.code !== null) || info.signal) {
      const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
      const when = this.#inTurn ? ' before the turn finished' : '';
      const tail = proc.stderrTail.split('\n').slice(-3).join(' | ');
      return this.#finish({
        type: 'exited',
        code: info.code,
        error: `the Codex app-server ${how}${when}${tail ? `: ${tail}` : ''}`,
      });
    }
    this.#finish({ type: 'exited', code: info.code ?? 0 });
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

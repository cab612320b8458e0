import type { ExitInfo } from './agent-process.ts';
import { AgentProcess } from './agent-process.ts';
import { EventQueue } from './event-queue.ts';
import type { HarnessEvent, PermissionDecision, Run } from './harness.ts';

/** The command line for one turn. */
export interface TurnPlan {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
}

/** Turns one process's stdout lines into events. A fresh parser is made for every turn. */
export interface TurnParser {
  /** Events for one stdout line; a line that fails its schema yields a `warning` with `malformed: true`. */
  line(line: string): HarnessEvent[];
  /** Events owed once the process has exited (e.g. a turnEnd decided from the exit code). */
  exit(info: ExitInfo): HarnessEvent[];
}

/** What a backend that runs one CLI process per turn (Codex, Gemini) supplies. */
export interface PerTurnBackend {
  /** Builds the command for a turn; `resumeId` is the backend session id once known. */
  plan(prompt: string, resumeId: string | undefined): TurnPlan;
  parser(): TurnParser;
}

/**
 * A multi-turn Run over a CLI that handles one turn per process: every `send` spawns the next turn,
 * resuming the backend session by id. A turn that crashes or fails ends the run; interrupted turns do not.
 */
export class PerTurnRun implements Run {
  #queue = new EventQueue<HarnessEvent>();
  #backend: PerTurnBackend;
  #sessionId: string;
  #graceMs: number;
  #backendId: string | undefined;
  #proc: AgentProcess | null = null;
  #pending: string[] = [];
  #ending = false;
  #killed = false;
  #interrupted = false;
  #finished = false;

  constructor(
    backend: PerTurnBackend,
    options: { sessionId: string; prompt: string; resumeId?: string; killGraceMs: number },
  ) {
    this.#backend = backend;
    this.#sessionId = options.sessionId;
    this.#graceMs = options.killGraceMs;
    this.#backendId = options.resumeId;
    this.#startTurn(options.prompt);
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  [Symbol.asyncIterator](): AsyncIterator<HarnessEvent> {
    return this.#queue[Symbol.asyncIterator]();
  }

  send(text: string): void {
    if (this.#finished || this.#killed) throw new Error('the run has ended');
    if (this.#proc) this.#pending.push(text);
    else this.#startTurn(text);
  }

  answerPermission(_requestId: string, _decision: PermissionDecision): void {
    // Non-interactive CLIs never ask; nothing to answer.
  }

  async interrupt(): Promise<void> {
    if (!this.#proc) return;
    this.#interrupted = true;
    this.#proc.stop(this.#graceMs);
  }

  end(): void {
    this.#ending = true;
    if (!this.#proc && this.#pending.length === 0) this.#finish({ type: 'exited', code: 0 });
  }

  kill(): void {
    if (this.#finished) return;
    this.#killed = true;
    this.#pending = [];
    if (this.#proc) this.#proc.stop(this.#graceMs);
    else this.#finish({ type: 'exited', code: null, error: 'killed' });
  }

  #emit(event: HarnessEvent): void {
    if (event.type === 'started') this.#backendId = event.backendSessionId;
    this.#queue.push(event);
  }

  #finish(event: HarnessEvent & { type: 'exited' }): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#queue.push(event);
    this.#queue.close();
  }

  #startTurn(prompt: string): void {
    const parser = this.#backend.parser();
    let turnEnd: (HarnessEvent & { type: 'turnEnd' }) | null = null;
    const onEvent = (event: HarnessEvent): void => {
      if (event.type === 'turnEnd') turnEnd = event;
      this.#emit(event);
    };
    let proc: AgentProcess;
    try {
      const plan = this.#backend.plan(prompt, this.#backendId);
      proc = new AgentProcess({
        command: plan.command,
        args: plan.args,
        cwd: plan.cwd,
        env: plan.env,
        stdin: 'ignore',
        sessionId: this.#sessionId,
        onLine: (line) => {
          for (const event of parser.line(line)) onEvent(event);
        },
      });
    } catch (error) {
      this.#finish({ type: 'exited', code: null, error: error instanceof Error ? error.message : String(error) });
      return;
    }
    this.#proc = proc;
    void proc.exited.then((info) => {
      this.#proc = null;
      for (const event of parser.exit(info)) onEvent(event);
      const interrupted = this.#interrupted;
      this.#interrupted = false;
      const ended = turnEnd;
      if (this.#killed) {
        this.#finish({ type: 'exited', code: info.code, error: 'killed' });
        return;
      }
      if (info.spawnError) {
        this.#finish({
          type: 'exited',
          code: null,
          error: `could not start ${this.#describe(proc)}: ${info.spawnError}`,
        });
        return;
      }
      if (!ended) {
        if (interrupted) {
          this.#emit({
            type: 'turnEnd',
            outcome: { ok: false, reason: 'interrupted', message: 'interrupted' },
            costUsd: 0,
          });
        } else {
          this.#finish({ type: 'exited', code: info.code, error: this.#crashMessage(info, proc) });
          return;
        }
      } else if (!ended.outcome.ok && ended.outcome.reason !== 'interrupted') {
        this.#finish({ type: 'exited', code: info.code });
        return;
      }
      const next = this.#pending.shift();
      if (next !== undefined) this.#startTurn(next);
      else if (this.#ending) this.#finish({ type: 'exited', code: info.code ?? 0 });
    });
  }

  #describe(proc: AgentProcess): string {
    return String(proc.child.spawnfile);
  }

  #crashMessage(info: ExitInfo, proc: AgentProcess): string {
    const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    const tail = proc.stderrTail;
    return `agent process ${how} before the turn finished${tail ? `: ${tail.split('\n').slice(-3).join(' | ')}` : ''}`;
  }
}

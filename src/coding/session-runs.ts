// The runs of the sessions live on this node and what their signals set off: a run's cost kept current and its end
// recorded, the pool's cleanup and the approvals of an ended session, the manager's listeners told; the work this
// starts is tracked for stop(). A session abandoned (its node declared lost) is no longer stored or announced from here.
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { PermissionGate } from './permission-gate.ts';
import type { Session, SessionSignal } from './session.ts';

/** What SessionRuns uses. */
export interface SessionRunsDeps {
  store: Pick<CodingSessionStore, 'setRunCost' | 'endRun'>;
  clock: Clock;
  logger: Logger;
  /** Where the pending approvals of an ended session are cancelled. */
  permissions?: PermissionGate;
  /** The pool's eviction of stored sessions beyond the limit, started by every session's end. */
  cleanup: () => Promise<unknown>;
}

/** The open runs of this node's live sessions, and the handling of their signals (see the file's comment). */
export class SessionRuns {
  readonly #deps: SessionRunsDeps;
  /** The open run of each live session, by session id. */
  readonly #runs = new Map<string, number>();
  readonly #listeners = new Set<(signal: SessionSignal) => void>();
  /** Run ends and cleanups started by a session's end; stop() waits for them. */
  readonly #background = new Set<Promise<unknown>>();
  /** Run ends being recorded, by session id: kill() resolves only once its run's end committed (stats count it). */
  readonly #runEnds = new Map<string, Promise<void>>();
  /** Sessions ended by abandonAll: nothing more is stored or announced about them from this node. */
  readonly #abandoned = new Set<string>();

  /** Takes the store the runs are recorded in and what an ended session's signal sets off. */
  constructor(deps: SessionRunsDeps) {
    this.#deps = deps;
  }

  /** Subscribes to every session's signals (output, tool, waiting, ended, …); returns the unsubscribe function. */
  on(listener: (signal: SessionSignal) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Records that a session started here runs as run `runId` (its cost and end are recorded on it). */
  opened(sessionId: string, runId: number): void {
    this.#runs.set(sessionId, runId);
  }

  /** Nothing more is stored or announced about this session from this node (its run is left open as it is). */
  abandon(sessionId: string): void {
    this.#abandoned.add(sessionId);
    this.#runs.delete(sessionId);
  }

  /** Whether the session was abandoned (see abandon). */
  isAbandoned(sessionId: string): boolean {
    return this.#abandoned.has(sessionId);
  }

  /** What is still being written for `session`: its row's writes and, while it is being recorded, its run's end. */
  writes(session: Pick<Session, 'id' | 'stored'>): Promise<void>[] {
    const ending = this.#runEnds.get(session.id);
    return ending ? [session.stored, ending] : [session.stored];
  }

  /** The work signals started that has not settled yet (stop() waits for it). */
  inFlight(): Promise<unknown>[] {
    return [...this.#background];
  }

  /**
   * Handles a session's signal: on `ended`, records the run's end and starts the cleanup and the cancelling of its
   * approvals; then tells every listener (a listener's error is logged). Nothing for an abandoned session.
   */
  handle(signal: SessionSignal): void {
    if (this.#abandoned.has(signal.session.id)) return;
    if (signal.type === 'ended') {
      const { logger } = this.#deps;
      const id = signal.session.id;
      const runEnd = this.end(signal.session, this.#deps.clock.now());
      this.#runEnds.set(id, runEnd);
      this.#inBackground(
        runEnd.finally(() => {
          if (this.#runEnds.get(id) === runEnd) this.#runEnds.delete(id);
        }),
        (error) => logger.error({ err: error }, 'recording a run end failed'),
      );
      this.#inBackground(this.#deps.cleanup(), (error) => logger.error({ err: error }, 'session cleanup failed'));
      const { permissions } = this.#deps;
      if (permissions)
        this.#inBackground(
          permissions.cancelSession(signal.session.id, 'The session ended before anyone answered.'),
          (error) => logger.error({ err: error }, 'cancelling the approvals of an ended session failed'),
        );
    }
    for (const listener of this.#listeners) {
      try {
        listener(signal);
      } catch (error) {
        this.#deps.logger.error({ err: error, signal: signal.type }, 'session listener failed');
      }
    }
  }

  /** Keeps the open run's cost current (stats count running sessions; a crash keeps what the run spent). */
  async recordCost(session: Session): Promise<void> {
    const runId = this.#runs.get(session.id);
    if (runId !== undefined) await this.#deps.store.setRunCost(runId, session.runCostUsd);
  }

  /** Ends the session's open run at `at` with its status and cost; no-op when it has none (already ended). */
  async end(session: Session, at: number): Promise<void> {
    const runId = this.#runs.get(session.id);
    if (runId === undefined) return;
    this.#runs.delete(session.id);
    await this.#deps.store.endRun(runId, session.status, session.runCostUsd, at);
  }

  /** Tracks work a signal started (stop() waits for it); `failed` reports its error. */
  #inBackground(work: Promise<unknown>, failed: (error: unknown) => void): void {
    const tracked = work.catch(failed).finally(() => this.#background.delete(tracked));
    this.#background.add(tracked);
  }
}

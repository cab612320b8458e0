import type { Session } from '../coding/session.ts';

/** True when some chat channel streams the session live. */
export function hasForegroundChannel(session: Session): boolean {
  return Object.values(session.record.foreground).some((view) => view.on);
}

/**
 * Decides which sessions get the one "still running" reminder: an active run that is not waiting for input, that no
 * channel streams live, and that has run at least `thresholdMs`. Each run is reminded once, keyed by the log seq its
 * run started at. No run outlives the daemon (a restart marks running sessions interrupted, and a resume is a new run
 * measured from its own start), so nothing needs persisting for "once" to hold across restarts.
 */
export class LongRunReminders {
  #thresholdMs: number;
  /** Session id → log seq of the run already reminded. */
  #reminded = new Map<string, number>();

  constructor(thresholdMs: number) {
    this.#thresholdMs = thresholdMs;
  }

  /** The sessions due for their reminder at `now`; each is marked reminded before it is returned. */
  due(sessions: readonly Session[], now: number): Session[] {
    const due: Session[] = [];
    for (const session of sessions) {
      if (!session.isActive || session.waitingFor !== null || hasForegroundChannel(session)) continue;
      if (session.runStartedAt === 0 || now - session.runStartedAt < this.#thresholdMs) continue;
      if (this.#reminded.get(session.id) === session.runStartSeq) continue;
      this.#reminded.set(session.id, session.runStartSeq);
      due.push(session);
    }
    return due;
  }

  /** Forgets a session whose run ended. */
  forget(sessionId: string): void {
    this.#reminded.delete(sessionId);
  }
}

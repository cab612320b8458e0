// What is done to running sessions of this node: a message sent in (or answering the approval it waits for), a kill
// (or a queued launch dropped), every session killed, and every agent abandoned when the cluster declared the node lost.
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { conflict, limitReached } from '../core/errors.ts';
import type { StoredSession } from '../store/coding-session-types.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { PermissionGate } from './permission-gate.ts';
import type { Session } from './session.ts';
import type { UserMessageSource } from './session-log.ts';
import type { SessionPool } from './session-pool.ts';
import type { SessionRuns } from './session-runs.ts';

/** What SessionControl uses. */
export interface SessionControlDeps {
  config: Config;
  clock: Clock;
  store: Pick<CodingSessionStore, 'cancelQueued'>;
  logs: Pick<SessionLogs, 'sync'>;
  /** Where a message to a session waiting for an approval goes (it decides the approval). */
  permissions?: PermissionGate;
  pool: SessionPool;
  runs: SessionRuns;
}

/** Sends to, kills and abandons the sessions of this node (see the file's comment). */
export class SessionControl {
  readonly #deps: SessionControlDeps;

  /** Takes the pool of live sessions, their runs (a kill waits for its run's end) and the store and logs. */
  constructor(deps: SessionControlDeps) {
    this.#deps = deps;
  }

  /**
   * Sends a message to a running session. Agent-sent messages count against maxAutoResponds; a user's message
   * resets the count. Resolves once the message's record in the session's log is durable (fdatasync'd, and committed
   * to the database in a cluster), so a message acknowledged is never missing from the transcript after a crash.
   * Returns the session and whether the text answered a permission request.
   */
  async send(
    ref: string,
    text: string,
    options: { source: UserMessageSource; interrupt?: boolean; via?: string; by?: string },
  ): Promise<{ session: Session; result: 'sent' | 'answered' }> {
    const session = await this.#deps.pool.requireLive(ref);
    const approvalId = session.pendingPermission?.approval?.id;
    const { permissions } = this.#deps;
    if (approvalId && permissions) {
      // A message to a session that waits for an approval decides it (the approval's decision, so every surface shows it).
      await permissions.answerText(approvalId, text, options.by ?? options.via ?? options.source);
      return { session, result: 'answered' };
    }
    const { maxAutoResponds } = this.#deps.config;
    if (options.source === 'agent') {
      if (session.record.autoResponds >= maxAutoResponds) {
        throw limitReached(
          `auto-respond limit reached for session ${session.name}: ${maxAutoResponds} agent responses without a user reply (maxAutoResponds). Ask the user to answer; their reply resets the count.`,
        );
      }
      await session.patch({ autoResponds: session.record.autoResponds + 1 });
    } else if (session.record.autoResponds !== 0) {
      await session.patch({ autoResponds: 0 });
    }
    const result = await session.send(text, options);
    await this.#deps.logs.sync(session.id);
    return { session, result };
  }

  /**
   * Kills a running session (or drops a queued launch); throws when it is unknown or already ended. `via` is the chat
   * the kill command came from, if any. Resolves with the final record once it is stored. A session in memory given by
   * its id is killed at once (a watchdog's kill takes effect before it returns); other refs are looked up first.
   */
  kill(ref: string, reason = 'killed by user', options: { via?: string } = {}): Promise<StoredSession> {
    const byId = this.#deps.pool.byId(ref);
    if (byId) return this.#kill({ ...byId.record }, reason, options);
    return this.#deps.pool.requireStored(ref).then((record) => this.#kill(record, reason, options));
  }

  async #kill(record: StoredSession, reason: string, options: { via?: string }): Promise<StoredSession> {
    const { pool, store, clock, runs } = this.#deps;
    if (record.status === 'queued') {
      // A queued launch never starts; if a node claimed it meanwhile, it is killed as a running session.
      const cancelled = await store.cancelQueued(record.id, reason, clock.now());
      if (cancelled) return cancelled;
      record = await pool.requireStored(record.id);
    }
    const session = pool.byId(record.id);
    if (!session || !session.kill(reason, options.via))
      throw conflict(`session ${record.name} is already ${record.status}`);
    const final = { ...session.record };
    // The row and the run's end (over PostgreSQL's pool neither is done by the time the kill's signal went out).
    await Promise.all(runs.writes(session));
    return final;
  }

  /** Kills every running session (used by tests and an explicit "kill all"); returns how many. */
  killAll(reason = 'killed'): number {
    let n = 0;
    for (const session of this.#deps.pool.values()) if (session.kill(reason)) n += 1;
    return n;
  }

  /**
   * Ends every live agent of this node without storing or announcing anything more about its session (its row, its
   * run, its signals): for a node the cluster declared lost while it ran, whose sessions another node marks (or has
   * marked) interrupted and announced. Returns how many agents were stopped.
   */
  abandonAll(reason: string): number {
    let n = 0;
    for (const [id, session] of [...this.#deps.pool.entries()]) {
      this.#deps.runs.abandon(id);
      this.#deps.pool.remove(id);
      if (session.kill(reason)) n += 1;
    }
    return n;
  }
}

// This node's claims of Linear dispatches in a cluster (see placement.ts): released dispatches of a lost node first
// (they already hold a slot), then queued ones under the cluster-wide cap, each only while this node has a free
// coding-session slot; and the stops other nodes recorded for the dispatches this node runs.
import type { SessionManager } from '../../coding/session-manager.ts';
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { DispatchPlacement } from './placement.ts';
import type { SessionWatch } from './session-watch.ts';

/** How a dispatch came to this node. */
export type ClaimKind = 'queued' | 'released';

/** What NodeClaims is built from. */
export interface NodeClaimsDeps {
  store: DispatchStore;
  placement: DispatchPlacement;
  sessions: Pick<SessionManager, 'liveSessions' | 'kill'>;
  watch: Pick<SessionWatch, 'unwatch'>;
  clock: Clock;
  logger: Logger;
}

/** This node's side of the cluster's dispatch queue (one pass at a time; `pass` again while one runs runs once more). */
export class NodeClaims {
  readonly #d: NodeClaimsDeps;
  /** Dispatches claimed here whose step (setup, takeover) has not finished yet: each will take a session slot. */
  readonly #pending = new Set<string>();
  #running: Promise<void> | null = null;
  #again = false;

  constructor(deps: NodeClaimsDeps) {
    this.#d = deps;
  }

  /** This node's name. */
  get node(): string {
    return this.#d.placement.claimant.node;
  }

  /** True when this node owns `d` (it claimed it and runs its sessions). */
  mine(d: Pick<DispatchRecord, 'node'>): boolean {
    return d.node === this.node;
  }

  /** The step of a claimed dispatch is over (its session started, or it ended otherwise): its slot is counted as a session's. */
  settled(dispatchId: string): void {
    this.#pending.delete(dispatchId);
  }

  /** Coding-session slots free on this node: `maxSessions` less its active sessions and the claims about to start one. */
  freeSlots(): number {
    const active = this.#d.sessions.liveSessions().filter((s) => s.isActive).length;
    return this.#d.placement.maxSessions - active - this.#pending.size;
  }

  /**
   * One pass: applies the stops recorded for this node's dispatches, then claims released and queued dispatches while
   * slots are free, handing each to `run`. Concurrent calls share a pass (and one more runs after it).
   */
  pass(cap: number, run: (d: DispatchRecord, kind: ClaimKind) => void): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#enforceStops();
          await this.#claim(cap, run);
        } while (this.#again);
      } finally {
        this.#running = null;
      }
    })();
    return this.#running;
  }

  async #claim(cap: number, run: (d: DispatchRecord, kind: ClaimKind) => void): Promise<void> {
    const { store, placement, clock } = this.#d;
    while (this.freeSlots() > 0) {
      const d = await store.claimReleased(placement.claimant, clock.now());
      if (!d) break;
      this.#pending.add(d.id);
      run(d, 'released');
    }
    while (this.freeSlots() > 0) {
      const d = await store.claimNextQueued(cap, clock.now(), placement.claimant);
      if (!d) break;
      this.#pending.add(d.id);
      run(d, 'queued');
    }
  }

  /**
   * A stop from Linear is handled by whichever node holds the webhook intake: it marks the dispatch `stopped` (and its
   * session's end cause) in the database. The session itself runs here: kill it.
   */
  async #enforceStops(): Promise<void> {
    const { store, sessions, watch, logger } = this.#d;
    for (const session of sessions.liveSessions()) {
      if (!session.isActive) continue;
      const row = await store.session(session.id);
      if (!row || row.endedAt !== null) continue;
      const d = await store.get(row.dispatchId);
      if (!d || d.status !== 'stopped' || !d.stopRequested || !this.mine(d)) continue;
      await store.setEndCause(session.id, 'stop');
      watch.unwatch(session.id);
      try {
        await sessions.kill(session.id, 'stopped from Linear');
      } catch (error) {
        logger.warn({ err: errorMessage(error), session: session.id }, 'could not kill a stopped dispatch session');
      }
    }
  }
}

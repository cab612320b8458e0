// The pump from the queue into the dispatch slots: on a node alone it claims queued dispatches under `maxConcurrent`
// and sets each up in its lane; in a cluster this node's claims pass (node-claims.ts) hands it the dispatches this node
// claimed, set up when they were queued and taken over when a lost node released them.
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { DispatchLanes } from './dispatch-lanes.ts';
import type { ClaimKind, NodeClaims } from './node-claims.ts';

/** What the pump is built from. */
export interface DispatchPumpDeps {
  /** False before the pipeline's `start()` and after its `stop()`: the pump starts nothing then. */
  running: () => boolean;
  /** The full dispatch store (a node alone claims from it). */
  store: Pick<DispatchStore, 'claimNextQueued'>;
  /** In a cluster: this node's claims; null on a node alone (it runs every dispatch). */
  claims: Pick<NodeClaims, 'pass' | 'settled'> | null;
  lanes: Pick<DispatchLanes, 'serial'>;
  clock: Clock;
  logger: Logger;
  /** The cap on dispatches holding a slot (`linear.pipeline.maxConcurrent`; cluster-wide in a cluster). */
  maxConcurrent: number;
  /** Sets up a claimed queued dispatch (worktree, first worker); run in its lane. */
  setup: (dispatchId: string) => Promise<void>;
  /** Takes over a dispatch a lost node released (cluster); run in its lane. */
  takeOver: (dispatchId: string) => Promise<void>;
}

/** Starts queued (and, in a cluster, released) dispatches while slots are free. */
export class DispatchPump {
  readonly #d: DispatchPumpDeps;

  constructor(deps: DispatchPumpDeps) {
    this.#d = deps;
  }

  /**
   * Starts queued dispatches while slots are free (each claim is one compare-and-swap, so concurrent pumps are safe);
   * resolves once the claims are made (their steps run on in their lanes). A no-op while not running.
   */
  async pump(): Promise<void> {
    const { running, claims, store, clock, lanes, maxConcurrent, setup } = this.#d;
    if (!running()) return;
    if (claims) {
      await claims.pass(maxConcurrent, (d, kind) => this.#run(claims, d, kind));
      return;
    }
    for (;;) {
      const d = await store.claimNextQueued(maxConcurrent, clock.now());
      if (!d) break;
      void lanes.serial(d.id, 'setup', () => setup(d.id));
    }
  }

  /** `pump` without waiting for it; a failure is logged. */
  kick(): void {
    this.pump().catch((error: unknown) =>
      this.#d.logger.warn({ err: errorMessage(error) }, 'could not look for Linear dispatches to run'),
    );
  }

  /**
   * Runs a dispatch this node claimed (cluster): set up when it was queued, taken over when a lost node released it.
   */
  #run(claims: Pick<NodeClaims, 'settled'>, d: DispatchRecord, kind: ClaimKind): void {
    const { lanes, setup, takeOver } = this.#d;
    const step = kind === 'queued' ? () => setup(d.id) : () => takeOver(d.id);
    void lanes.serial(d.id, kind === 'queued' ? 'setup' : 'takeover', step).finally(() => {
      claims.settled(d.id);
      // A claim that ended without a session (stuck, stopped) left its slot free.
      this.kick();
    });
  }
}

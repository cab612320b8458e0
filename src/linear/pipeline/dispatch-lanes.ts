// One lane per dispatch: the steps of a dispatch run one after another and never interleave; lanes of different
// dispatches run side by side.
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';

/** What the lanes are built from. */
export interface DispatchLanesDeps {
  logger: Logger;
  /** Told when a step threw (the pipeline records it as the dispatch's last error). */
  onFailure: (dispatchId: string, message: string) => void;
}

/** Serializes the steps of each dispatch. */
export class DispatchLanes {
  #deps: DispatchLanesDeps;
  #chains = new Map<string, { tail: Promise<void>; pending: number }>();

  constructor(deps: DispatchLanesDeps) {
    this.#deps = deps;
  }

  /**
   * Runs `fn` after every earlier task of the same dispatch has finished, so the steps of one dispatch never
   * interleave. Errors are logged and reported to `onFailure` (the monitor's reconcile pass picks the dispatch up
   * again); never rejects.
   */
  serial(dispatchId: string, label: string, fn: () => Promise<void>): Promise<void> {
    const chain = this.#chains.get(dispatchId) ?? { tail: Promise.resolve(), pending: 0 };
    chain.pending += 1;
    const next = chain.tail.then(fn).catch((error: unknown) => {
      this.#deps.logger.error({ err: error, dispatch: dispatchId, step: label }, 'pipeline step failed');
      this.#deps.onFailure(dispatchId, `${label}: ${errorMessage(error)}`);
    });
    chain.tail = next.finally(() => {
      chain.pending -= 1;
      if (chain.pending === 0 && this.#chains.get(dispatchId) === chain) this.#chains.delete(dispatchId);
    });
    this.#chains.set(dispatchId, chain);
    return next;
  }

  /** True while a step of the dispatch is queued or running. */
  busy(dispatchId: string): boolean {
    return (this.#chains.get(dispatchId)?.pending ?? 0) > 0;
  }

  /** Resolves when every queued step of every dispatch has run. */
  async settle(): Promise<void> {
    while (this.#chains.size > 0) await Promise.all([...this.#chains.values()].map((c) => c.tail));
  }
}

// The pipeline's two kinds of slot: a dispatch holds one of `maxConcurrent` dispatch slots from setup to its end, and
// each of its phases needs a coding-session slot (`maxSessions`), for which it may have to wait.

/** What the slots are built from. */
export interface PipelineSlotsDeps {
  /** Called when a dispatch gives its dispatch slot back (the pipeline starts the next queued one). */
  onDispatchSlotFreed: () => Promise<void>;
}

/** The dispatches waiting for a coding-session slot, and the news that a dispatch slot is free. */
export class PipelineSlots {
  #deps: PipelineSlotsDeps;
  #waiting = new Set<string>();

  constructor(deps: PipelineSlotsDeps) {
    this.#deps = deps;
  }

  /** Marks the dispatch as waiting for a coding-session slot; false when it was already waiting. */
  waitForSession(dispatchId: string): boolean {
    if (this.#waiting.has(dispatchId)) return false;
    this.#waiting.add(dispatchId);
    return true;
  }

  /** The dispatch no longer waits for a coding-session slot (it got one, or it stopped). */
  stopWaiting(dispatchId: string): void {
    this.#waiting.delete(dispatchId);
  }

  /** The dispatches waiting for a coding-session slot, in the order they began to wait. */
  waitingForSession(): string[] {
    return [...this.#waiting];
  }

  /** A dispatch gave its dispatch slot back; resolves once the queued dispatches that could start have. */
  dispatchSlotFreed(): Promise<void> {
    return this.#deps.onDispatchSlotFreed();
  }
}

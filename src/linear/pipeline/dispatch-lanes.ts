// One lane per dispatch: the steps of a dispatch run one after another and never interleave; lanes of different
// dispatches run side by side. Each lane is a WorkLoop that runs its queued steps in order.
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { StepResult } from '../../core/work-loop.ts';
import { WorkLoop } from '../../core/work-loop.ts';

/** What the lanes are built from. */
export interface DispatchLanesDeps {
  clock: Clock;
  logger: Logger;
  /** Told when a step threw (the pipeline records it as the dispatch's last error). */
  onFailure: (dispatchId: string, message: string) => void;
}

interface Task {
  label: string;
  fn: () => Promise<void>;
  done: () => void;
}

interface Lane {
  tasks: Task[];
  /** True while a step runs (false before its caller is resumed, so it sees the lane free). */
  active: boolean;
  loop: WorkLoop;
}

/** Serializes the steps of each dispatch. */
export class DispatchLanes {
  #deps: DispatchLanesDeps;
  #lanes = new Map<string, Lane>();

  constructor(deps: DispatchLanesDeps) {
    this.#deps = deps;
  }

  /**
   * Runs `fn` after every earlier task of the same dispatch has finished, so the steps of one dispatch never
   * interleave. Errors are logged and reported to `onFailure` (the monitor's reconcile pass picks the dispatch up
   * again); never rejects.
   */
  serial(dispatchId: string, label: string, fn: () => Promise<void>): Promise<void> {
    const lane = this.#lanes.get(dispatchId) ?? this.#newLane(dispatchId);
    const finished = new Promise<void>((resolve) => lane.tasks.push({ label, fn, done: resolve }));
    lane.loop.kick();
    return finished;
  }

  /** True while a step of the dispatch is queued or running. */
  busy(dispatchId: string): boolean {
    const lane = this.#lanes.get(dispatchId);
    return lane !== undefined && (lane.tasks.length > 0 || lane.active);
  }

  /** Resolves when every queued step of every dispatch has run. */
  async idle(): Promise<void> {
    while (this.#lanes.size > 0) await Promise.all([...this.#lanes.values()].map((lane) => lane.loop.idle()));
  }

  #newLane(dispatchId: string): Lane {
    const tasks: Task[] = [];
    const lane: Lane = {
      tasks,
      active: false,
      loop: new WorkLoop({
        clock: this.#deps.clock,
        step: () => this.#next(dispatchId, lane),
        // Steps never throw out of `#next` (failures go to onFailure; the monitor retries the dispatch).
        retryDelay: () => 0,
        onQuiet: () => {
          if (this.#lanes.get(dispatchId) === lane && tasks.length === 0) this.#lanes.delete(dispatchId);
        },
      }),
    };
    this.#lanes.set(dispatchId, lane);
    return lane;
  }

  async #next(dispatchId: string, lane: Lane): Promise<StepResult> {
    const task = lane.tasks.shift();
    if (!task) return 'quiet';
    lane.active = true;
    try {
      await task.fn();
    } catch (error) {
      this.#deps.logger.error({ err: error, dispatch: dispatchId, step: task.label }, 'pipeline step failed');
      this.#deps.onFailure(dispatchId, `${task.label}: ${errorMessage(error)}`);
    }
    lane.active = false;
    task.done();
    return 'more';
  }
}

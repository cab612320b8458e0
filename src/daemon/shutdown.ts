// The daemon's stop order, written once: each start step registers what stops it under its name, and the stop runs the
// steps in the order below (the reverse of the start). A start that fails halfway stops only what it registered so far,
// in the same order.
import type { Logger } from '../core/logger.ts';

/** The stop steps, first stopped to last: the gateway first, then the services, the cluster node, the store, the lock. */
export const STOP_ORDER = [
  'gateway',
  'webhook-wakeups',
  'record-retention',
  'engine-calls',
  'primary-poll',
  // The chat connectors, the last started stopped first (the web page's and Slack's http mode run everywhere; the
  // others are `primary` members).
  'connectors',
  // The node's Linear pipeline and the cluster sessions are stopped before the sessions, like the primary's `linear`.
  'linear-dispatch-node',
  'cluster-sessions',
  // Linear's and GitHub's workers are stopped before the sessions: they leave their running sessions to them.
  'linear',
  'github',
  // The sessions are stopped before the wake router and the notifications, so the sessions they interrupt are
  // announced.
  'sessions',
  'wake',
  'scheduler',
  'approval-notices',
  'notifications',
  'engine',
  'record-reader',
  'approvals',
  // The records are closed after the logs' writers stopped.
  'cluster-records',
  'outbox',
  // The leases are given up and the node leaves (a clean leave is not taken for a lost node) once its services stopped.
  'cluster-node',
  'store',
  'daemon-lock',
] as const;

/** One step of STOP_ORDER. */
export type StopStep = (typeof STOP_ORDER)[number];

/** What stops one part of the daemon. */
export type StopFn = () => Promise<void> | void;

/** The registered stops of a daemon, run in STOP_ORDER; an error is logged and the stop goes on with the next one. */
export class Shutdown {
  readonly #logger: Logger;
  readonly #steps = new Map<StopStep, StopFn[]>();

  /** `logger` takes the errors of the stops. */
  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Registers what stops `step`; several stops of one step run in reverse order of registration. */
  add(step: StopStep, stop: StopFn): void {
    const stops = this.#steps.get(step);
    if (stops) stops.push(stop);
    else this.#steps.set(step, [stop]);
  }

  /** Runs every registered stop in STOP_ORDER (each once per call); resolves when all ran. */
  async run(): Promise<void> {
    for (const step of STOP_ORDER) {
      for (const stop of [...(this.#steps.get(step) ?? [])].reverse()) {
        try {
          await stop();
        } catch (error) {
          this.#logger.error({ err: error }, 'error while stopping');
        }
      }
    }
  }
}

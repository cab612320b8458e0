// Runs the router's durable jobs (store/linear-jobs.ts): a bounded number at once, one at a time per serial key, with
// retries and backoff for failures that may pass, and a last word in Linear (the kind's `giveUp`) when a job fails
// for good. Jobs left running by a crash run again after the restart. A stop from Linear cancels a session's jobs.
import type { Clock, Timer } from '../core/clock.ts';
import type { LinearRouterConfig } from '../core/config-linear-agents.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { StepResult } from '../core/work-loop.ts';
import { WorkLoop } from '../core/work-loop.ts';
import type { LinearJob, LinearJobStore, NewJob } from '../store/linear-jobs.ts';
import { LinearApiError } from './api/types.ts';

/** What runs one kind of job. */
export interface JobKind {
  /** Does the work; `signal` aborts when the job is cancelled (stop from Linear) or the daemon stops. */
  run(job: LinearJob, signal: AbortSignal): Promise<void>;
  /** Tells the user the job failed for good (a comment or an error activity); failures here are logged. */
  giveUp(job: LinearJob, error: string): Promise<void>;
}

export interface JobRunnerDeps {
  store: LinearJobStore;
  kinds: Record<string, JobKind>;
  clock: Clock;
  logger: Logger;
  config: LinearRouterConfig;
}

/** True for failures another attempt may get past: Linear's transient errors, the model, the network. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof AppError) return false;
  if (error instanceof LinearApiError) return error.retryable;
  return true;
}

/** The runner; `start` once, `enqueue` work, `stop` at shutdown. */
export class JobRunner {
  #d: JobRunnerDeps;
  #running = false;
  #active = new Map<number, { controller: AbortController; done: Promise<void> }>();
  /** Each pass claims what is due into the free slots and sleeps until the next due time; a finished job kicks it. */
  #loop: WorkLoop;

  constructor(deps: JobRunnerDeps) {
    this.#d = deps;
    this.#loop = new WorkLoop({
      clock: deps.clock,
      step: () => this.#turn(),
      retryDelay: () => deps.config.retryInitialSec * 1000,
    });
  }

  /** Queues jobs interrupted by the last process again and starts working (resolves once that is committed). */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#loop.start();
    const { store, clock, logger, config } = this.#d;
    const recovered = await store.recoverInterrupted(clock.now());
    if (recovered > 0) logger.warn({ recovered }, 'linear jobs: running again what a restart cut off');
    const pruned = await store.prune(clock.now() - config.retentionSec * 1000);
    if (pruned > 0) logger.info({ pruned }, 'linear jobs: pruned finished jobs');
    this.#schedule();
  }

  /** Queues a job (a no-op when its key exists) and wakes the runner. Resolves, once committed, the job and whether it is new. */
  async enqueue(job: NewJob): Promise<{ job: LinearJob; created: boolean }> {
    const result = await this.#d.store.enqueue(job, this.#d.clock.now());
    if (result.created) this.#d.logger.info({ job: job.key, kind: job.kind }, 'linear job queued');
    this.#schedule();
    return result;
  }

  /** Cancels the queued and running jobs of an agent session (a stop from Linear); resolves them. */
  async cancelForSession(agentSessionId: string): Promise<LinearJob[]> {
    const cancelled = await this.#d.store.cancelForSession(agentSessionId, this.#d.clock.now());
    for (const job of cancelled) this.#active.get(job.seq)?.controller.abort();
    if (cancelled.length > 0)
      this.#d.logger.info(
        { agentSession: agentSessionId, jobs: cancelled.map((j) => j.key) },
        'linear jobs cancelled by a stop',
      );
    return cancelled;
  }

  /**
   * Stops taking jobs and aborts the running ones, waiting for them at most `stopGraceSec`; jobs that did not finish
   * stay `running` in the store and run again at the next start.
   */
  async stop(): Promise<void> {
    const { clock, logger, config } = this.#d;
    this.#running = false;
    await this.#loop.stop();
    const active = [...this.#active.values()];
    for (const a of active) a.controller.abort();
    if (active.length > 0) {
      let grace: Timer | undefined;
      const timedOut = await Promise.race([
        Promise.all(active.map((a) => a.done)).then(() => false),
        new Promise<boolean>((resolve) => (grace = clock.after(config.stopGraceSec * 1000, () => resolve(true)))),
      ]);
      grace?.cancel();
      if (timedOut)
        logger.warn(
          { running: this.#active.size },
          'linear jobs still running at shutdown; they run again at the next start',
        );
    }
  }

  /** Resolves once nothing runs and nothing is due now (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      await this.#loop.idle();
      const active = [...this.#active.values()];
      if (active.length > 0) {
        await Promise.all(active.map((a) => a.done));
        continue;
      }
      if (this.#loop.running) continue;
      return;
    }
  }

  #schedule(): void {
    if (this.#running) this.#loop.kick();
  }

  /** Claims the due jobs that fit the free slots and starts them; then sleeps until the next due time. */
  async #turn(): Promise<StepResult> {
    if (!this.#running) return 'quiet';
    const { store, clock, logger, config } = this.#d;
    let claimed: LinearJob[] = [];
    try {
      claimed = await store.claimDue(clock.now(), config.concurrency - this.#active.size);
    } catch (error) {
      logger.error({ err: errorMessage(error) }, 'linear jobs: cannot read the queue');
    }
    for (const job of claimed) {
      const controller = new AbortController();
      const done = this.#process(job, controller.signal).finally(() => {
        this.#active.delete(job.seq);
        this.#schedule();
      });
      this.#active.set(job.seq, { controller, done });
    }
    const now = clock.now();
    const due = await store.nextDueAfter(now);
    return due === undefined ? 'quiet' : { wakeInMs: due - now };
  }

  /** Runs one job and records its outcome; never rejects. */
  async #process(job: LinearJob, signal: AbortSignal): Promise<void> {
    const { store, clock, logger, config, kinds } = this.#d;
    const meta = { job: job.key, kind: job.kind, attempt: job.attempts };
    const kind = kinds[job.kind];
    if (!kind) {
      logger.error(meta, 'linear job of an unknown kind; dropped');
      await store.finish(job.seq, 'failed', `unknown job kind ${job.kind}`, clock.now());
      return;
    }
    try {
      await kind.run(job, signal);
      // Work that completed is done, even if a stop or a shutdown came meanwhile (kinds throw when they stopped early).
      await store.finish(job.seq, 'done', null, clock.now());
    } catch (error) {
      const message = errorMessage(error);
      if (signal.aborted) {
        // Cancelled (already recorded) or the daemon is stopping (the job runs again at the next start).
        logger.info({ ...meta, err: message }, 'linear job aborted');
        return;
      }
      if (isRetryable(error) && job.attempts < config.maxAttempts) {
        const delay = config.retryInitialSec * 1000 * 2 ** (job.attempts - 1);
        logger.warn({ ...meta, err: message, retryInMs: delay }, 'linear job failed; will retry');
        await store.retry(job.seq, message, clock.now() + delay, clock.now());
        return;
      }
      logger.error({ ...meta, err: message }, 'linear job failed');
      if (!(await store.finish(job.seq, 'failed', message, clock.now()))) return;
      try {
        await kind.giveUp(job, message);
      } catch (giveUpError) {
        logger.error({ ...meta, err: errorMessage(giveUpError) }, 'linear job: could not report its failure in Linear');
      }
    }
  }
}

// The record a dispatch keeps in its worktree: `.switchboard/log.jsonl` and the manifest (see artifacts.ts), one
// DispatchArtifacts handle per dispatch.
import type { Clock } from '../../core/clock.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import { DispatchArtifacts } from './artifacts.ts';

/** What the journal is built from. */
export interface DispatchJournalDeps {
  /** Read for the dispatch's current status and attempt at each record. */
  store: Pick<DispatchStore, 'get'>;
  clock: Clock;
  logger: Logger;
  /** `linear.pipeline.workerOutputMaxBytes`. */
  maxWorkerBytes: number;
}

/** The artifacts of every dispatch in progress, and the pipeline's event log in them. */
export class DispatchJournal {
  #deps: DispatchJournalDeps;
  #artifacts = new Map<string, DispatchArtifacts>();

  constructor(deps: DispatchJournalDeps) {
    this.#deps = deps;
  }

  /** The artifacts of a dispatch, or null before its worktree exists. */
  artifacts(d: DispatchRecord): DispatchArtifacts | null {
    if (!d.worktreePath) return null;
    let artifacts = this.#artifacts.get(d.id);
    if (!artifacts) {
      artifacts = new DispatchArtifacts(d.worktreePath, {
        now: () => this.#deps.clock.now(),
        maxWorkerBytes: this.#deps.maxWorkerBytes,
      });
      this.#artifacts.set(d.id, artifacts);
    }
    return artifacts;
  }

  /** Appends `event` to the dispatch's log.jsonl and rewrites its manifest; failures are logged, not thrown. */
  async record(d: DispatchRecord, event: string, fields: Record<string, unknown> = {}): Promise<void> {
    const { logger, store } = this.#deps;
    logger.info({ dispatch: d.id, issue: d.identifier, event }, `pipeline: ${event}`);
    const artifacts = this.artifacts(d);
    if (!artifacts) return;
    try {
      const fresh = (await store.get(d.id)) ?? d;
      await artifacts.log(event, { dispatchId: d.id, status: fresh.status, attempt: fresh.attempt, ...fields });
      await artifacts.manifest(fresh, fresh.context.issueUrl ?? null);
    } catch (error) {
      logger.error({ err: errorMessage(error), dispatch: d.id, event }, 'could not write pipeline artifacts');
    }
  }

  /** Writes out and forgets the dispatch's artifact handle. */
  async close(dispatchId: string): Promise<void> {
    const artifacts = this.#artifacts.get(dispatchId);
    this.#artifacts.delete(dispatchId);
    await artifacts?.close();
  }

  /** Closes every artifact handle. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#artifacts.keys()].map((id) => this.close(id)));
  }
}

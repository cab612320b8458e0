// Recovery after a restart or the loss of a node: the sessions cut off are marked interrupted together with the notice
// owed about them (one transaction each), their runs closed and their agents stopped; the owed notices are listed until
// the caller says they are stored.
import type { Config } from '../core/config.ts';
import { faultPoint } from '../core/fault.ts';
import { ACTIVE_STATUSES } from '../store/coding-session-types.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { LostNodeDeps } from './lost-node.ts';
import { interruptLostNode } from './lost-node.ts';
import { orphanReport, sweepOrphans } from './orphans.ts';
import type { SessionPool } from './session-pool.ts';

/** What SessionRecovery uses: what interrupting a lost node needs, the config and the pool of live sessions. */
export interface SessionRecoveryDeps extends LostNodeDeps {
  config: Config;
  pool: Pick<SessionPool, 'has'>;
}

/** Marks the sessions a restart or a lost node cut off interrupted, with their owed notices (see the file). */
export class SessionRecovery {
  readonly #deps: SessionRecoveryDeps;

  /** Takes the store, logs and notices it marks in, the approvals it cancels, and the pool a rejoining node spares. */
  constructor(deps: SessionRecoveryDeps) {
    this.#deps = deps;
  }

  /**
   * After a restart: sessions the store still shows as active were cut off by the crash. Marks them interrupted
   * (in the row and the log) together with an owed notice (one transaction), closes their open runs and stops their
   * orphaned agent processes. Returns the ids whose notice is owed — these and any an earlier start marked but did not
   * get to announce; call `restartNoticesStored` once their notices are stored.
   */
  async restore(): Promise<string[]> {
    const { store, logs, clock, logger, notices, config } = this.#deps;
    const now = clock.now();
    // On a shared store (PostgreSQL) only this node's sessions were cut off (and rows from before nodes were recorded).
    const node = config.store.url ? config.node.name : undefined;
    const cut = (await store.list(ACTIVE_STATUSES)).filter(
      (s) => node === undefined || s.node === null || s.node === node,
    );
    const remained = sweepOrphans(cut);
    if (cut.length > 0) {
      const report = orphanReport(remained, cut.length);
      if (remained.length > 0) logger.warn({ orphans: remained }, report);
      else logger.info(report);
    }
    for (const record of cut) {
      await logs.prepare(record.id);
      logs.write(record.id, { type: 'status', status: 'interrupted', endReason: 'daemon restarted' });
      const patch = {
        status: 'interrupted',
        completedAt: now,
        updatedAt: now,
        endReason: 'daemon restarted',
        pid: null,
      } as const;
      // On a shared store a compare-and-swap: a node that took this one over while it was down may have marked it.
      const owner = node !== undefined ? record.node : null;
      const mark = async (trx?: Parameters<CodingSessionStore['update']>[2]): Promise<boolean> => {
        if (owner === null) {
          await store.update(record.id, patch, trx);
          return true;
        }
        return store.patchIfActiveOn(record.id, owner, patch, trx);
      };
      if (notices) await notices.markWithNotice(record.id, now, mark);
      else await mark();
      // On a shared store the desk's start-up sweep would cancel other nodes' requests: only these are cancelled.
      if (node !== undefined)
        await this.#deps.permissions?.cancelSession(
          record.id,
          'the daemon restarted; resume the session to be asked again',
        );
    }
    await store.closeOpenRuns(now, node === undefined ? {} : { node });
    if (cut.length > 0) logger.info({ sessions: cut.map((s) => s.name) }, 'sessions interrupted by the last shutdown');
    faultPoint('sessions.restore.after-mark');
    return notices ? await notices.pending() : cut.map((s) => s.id);
  }

  /**
   * Takeover of a lost node of the cluster: marks its sessions interrupted ("node <name> lost"), see interruptLostNode.
   * Returns the ids whose notice is owed, as restore does. `spareLive`: leaves the sessions live in the pool alone
   * (this node, declared down while it ran, marks what it left behind after `abandonAll`).
   */
  interruptNode(node: string, options: { spareLive?: boolean } = {}): Promise<string[]> {
    return interruptLostNode(this.#deps, node, options.spareLive ? (id) => this.#deps.pool.has(id) : undefined);
  }

  /** Records that the notices of these interrupted sessions (chat and orchestrator) are stored; restore owes them no more. */
  async restartNoticesStored(sessionIds: readonly string[]): Promise<void> {
    await this.#deps.notices?.done(sessionIds);
  }
}

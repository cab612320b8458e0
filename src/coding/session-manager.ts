import type { Transaction } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { Approval } from '../store/approvals.ts';
import type { Placement, SessionStatus, StoredSession } from '../store/coding-session-types.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import type { RestartNoticeStore } from '../store/restart-notices.ts';
import type { SessionLogs, SessionRecordSource } from '../store/session-logs.ts';
import type { Database } from '../store/tables/index.ts';
import type { Harness } from './harness.ts';
import type { PermissionGate } from './permission-gate.ts';
import type { Session, SessionSignal } from './session.ts';
import type { LaunchExtra, LaunchRequest } from './session-admission.ts';
import { SessionAdmission } from './session-admission.ts';
import { SessionCleanup } from './session-cleanup.ts';
import { SessionControl } from './session-control.ts';
import type { ResumeOptions } from './session-launches.ts';
import { SessionLaunches } from './session-launches.ts';
import type { UserMessageSource } from './session-log.ts';
import { SessionPool } from './session-pool.ts';
import { SessionReads } from './session-reads.ts';
import { SessionRecovery } from './session-recovery.ts';
import { SessionRuns } from './session-runs.ts';
import type { TranscriptEntry, TranscriptView } from './transcript.ts';

export type { LaunchExtra, LaunchRequest } from './session-admission.ts';

/** What SessionManager is built from: config, clock, logger, store, logs and harnesses, and the options below. */
export interface SessionManagerDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  store: CodingSessionStore;
  logs: SessionLogs;
  /**
   * Where `readTranscript`/`readLastSeq` read a session's records on whichever node it runs (in a cluster: the
   * database for a session not live here); default this node's logs.
   */
  records?: SessionRecordSource;
  harnesses: Record<HarnessName, Harness>;
  /** The notices a restart owes (see restore); without it, restore announces only what it marks itself. */
  notices?: RestartNoticeStore;
  /**
   * Where sessions' permission requests go (the ApprovalDesk). Without it, a pending request is answered by the next
   * message sent into the session.
   */
  permissions?: PermissionGate;
  /**
   * Cluster: false while this node does not serve (declared down while it ran, until it rejoined: `ClusterNode.fenced`).
   * A launch or resume reaching this manager directly is then refused with `unavailable`, and no queued launch is
   * claimed. Default: always serving.
   */
  serving?: () => boolean;
}

/**
 * The pool of coding sessions: limits, names, launch/resume/send/kill, restore after a restart, cleanup, metrics. A
 * facade over its parts: the sessions in memory (SessionPool), their runs and signals (SessionRuns), launch admission
 * (SessionAdmission), launches and resumes (SessionLaunches), send and kill (SessionControl), reads (SessionReads),
 * restart recovery (SessionRecovery) and cleanup (SessionCleanup).
 */
export class SessionManager {
  readonly #deps: SessionManagerDeps;
  readonly #pool: SessionPool;
  readonly #runs: SessionRuns;
  readonly #cleanup: SessionCleanup;
  readonly #admission: SessionAdmission;
  readonly #launches: SessionLaunches;
  readonly #control: SessionControl;
  readonly #reads: SessionReads;
  readonly #recovery: SessionRecovery;

  constructor(deps: SessionManagerDeps) {
    this.#deps = deps;
    const { config, clock, logger, store, logs, records, harnesses, notices, permissions, serving } = deps;
    const pool = new SessionPool(store);
    const cleanup = new SessionCleanup({ clock, config, store, logs, pool });
    const runs = new SessionRuns({ store, clock, logger, permissions, cleanup: () => cleanup.evict() });
    const admission = new SessionAdmission({ config, clock, store, harnesses, serving, pool });
    const reads = new SessionReads({ store, logs, records, pool });
    this.#pool = pool;
    this.#runs = runs;
    this.#cleanup = cleanup;
    this.#admission = admission;
    this.#reads = reads;
    const launches = { config, clock, logger, store, logs, harnesses, permissions, admission, pool, runs, reads };
    this.#launches = new SessionLaunches(launches);
    this.#control = new SessionControl({ config, clock, store, logs, permissions, pool, runs });
    this.#recovery = new SessionRecovery({ config, clock, logger, store, logs, notices, permissions, pool });
  }

  /** Subscribes to every session's signals (output, tool, waiting, ended, …); returns the unsubscribe function. */
  on(listener: (signal: SessionSignal) => void): () => void {
    return this.#runs.on(listener);
  }

  /** After a restart: marks the sessions cut off interrupted with their owed notices (see SessionRecovery.restore). */
  restore(): Promise<string[]> {
    return this.#recovery.restore();
  }

  /** Takeover of a lost node: marks its sessions interrupted (see SessionRecovery.interruptNode). */
  interruptNode(node: string, options: { spareLive?: boolean } = {}): Promise<string[]> {
    return this.#recovery.interruptNode(node, options);
  }

  /** Records that the notices of these interrupted sessions (chat and orchestrator) are stored; restore owes them no more. */
  restartNoticesStored(sessionIds: readonly string[]): Promise<void> {
    return this.#recovery.restartNoticesStored(sessionIds);
  }

  /** Starts the periodic cleanup (every `timings.cleanupIntervalMs`). */
  startTimers(): void {
    this.#cleanup.start();
  }

  /** Validates, stores and starts a launch now; resolves once stored (see SessionLaunches.launch). */
  launch(request: LaunchRequest, extra: LaunchExtra = {}): Promise<Session> {
    return this.#launches.launch(request, extra);
  }

  /** Stores a launch `queued` in the cluster's queue; resolves once committed (see SessionLaunches.enqueue). */
  enqueue(
    request: LaunchRequest,
    placement: Placement,
    also?: (record: StoredSession, trx: Transaction<Database>) => Promise<void>,
    extra: { resumedFrom?: string } = {},
  ): Promise<StoredSession> {
    return this.#launches.enqueue(request, placement, also, extra);
  }

  /** Starts a launch claimed from the queue when a slot is free, else null (see SessionLaunches.claimAndStart). */
  claimAndStart(
    claim: () => Promise<{ record: StoredSession; runId: number } | null>,
    via?: { id: string; via: string },
  ): Promise<Session | null> {
    return this.#launches.claimAndStart(claim, via);
  }

  /** `launch`, in its turn: a burst runs one launch per event-loop turn (see SessionLaunches.launchSoon). */
  launchSoon(request: LaunchRequest, extra: LaunchExtra = {}): Promise<Session> {
    return this.#launches.launchSoon(request, extra);
  }

  /** `resume`, in its turn among launches and resumes (see launchSoon). */
  resumeSoon(ref: string, options: ResumeOptions = {}): Promise<Session> {
    return this.#launches.resumeSoon(ref, options);
  }

  /** Resumes a session that is not running, in place or as a fork (see SessionLaunches.resume). */
  resume(ref: string, options: ResumeOptions = {}): Promise<Session> {
    return this.#launches.resume(ref, options);
  }

  /** Sends a message to a running session; resolves once it is durable (see SessionControl.send). */
  send(
    ref: string,
    text: string,
    options: { source: UserMessageSource; interrupt?: boolean; via?: string; by?: string },
  ): Promise<{ session: Session; result: 'sent' | 'answered' }> {
    return this.#control.send(ref, text, options);
  }

  /** Kills a running session or drops a queued launch; resolves with the final record (see SessionControl.kill). */
  kill(ref: string, reason = 'killed by user', options: { via?: string } = {}): Promise<StoredSession> {
    return this.#control.kill(ref, reason, options);
  }

  /** Kills every running session (used by tests and an explicit "kill all"); returns how many. */
  killAll(reason = 'killed'): number {
    return this.#control.killAll(reason);
  }

  /** Ends every live agent here, storing and announcing nothing more of them (see SessionControl.abandonAll). */
  abandonAll(reason: string): number {
    return this.#control.abandonAll(reason);
  }

  /** The live Session for a ref (id, name or backend id), if it is in memory. */
  live(ref: string): Promise<Session | undefined> {
    return this.#pool.live(ref);
  }

  /** The live Session with this internal id, if it is in memory (no store lookup). */
  liveById(id: string): Session | undefined {
    return this.#pool.byId(id);
  }

  /** The stored record for a ref (id, name or backend id); throws not_found. */
  get(ref: string): Promise<StoredSession> {
    return this.#pool.requireStored(ref);
  }

  /** All stored sessions, newest first, optionally filtered by status. */
  list(statuses?: readonly SessionStatus[]): Promise<StoredSession[]> {
    return this.#reads.list(statuses);
  }

  /** One page of stored sessions, newest first (see CodingSessionStore.page). */
  page(options: Parameters<CodingSessionStore['page']>[0]): ReturnType<CodingSessionStore['page']> {
    return this.#reads.page(options);
  }

  /** Sessions starting or running per node of the cluster (one grouped query). */
  activeByNode(): Promise<Map<string, number>> {
    return this.#reads.activeByNode();
  }

  /** Sessions currently in memory. */
  liveSessions(): Session[] {
    return [...this.#pool.values()];
  }

  /** Last output blocks of a session (live buffer, or read back from its log), with their log seqs. */
  outputBlocks(record: StoredSession, afterSeq = 0): { seq: number; text: string }[] {
    return this.#reads.outputBlocks(record, afterSeq);
  }

  /** Like `outputBlocks` (all of them), for a session on any node of the cluster. */
  readOutputBlocks(record: StoredSession): Promise<{ seq: number; text: string }[]> {
    return this.#reads.readOutputBlocks(record);
  }

  /** What a session did, read back from its log: text, tool calls and permission requests (`text`: text only). */
  transcript(record: StoredSession, view: TranscriptView = 'all'): TranscriptEntry[] {
    return this.#reads.transcript(record, view);
  }

  /** Sequence number of the newest record of a session's log. */
  lastSeq(sessionId: string): number {
    return this.#reads.lastSeq(sessionId);
  }

  /** Like `transcript`, for a session on any node of the cluster (read from the database when it is not live here). */
  readTranscript(record: StoredSession, view: TranscriptView = 'all'): Promise<TranscriptEntry[]> {
    return this.#reads.readTranscript(record, view);
  }

  /** Like `lastSeq`, for a session on any node of the cluster. */
  readLastSeq(sessionId: string): Promise<number> {
    return this.#reads.readLastSeq(sessionId);
  }

  /** Calls `listener` with every record of a session from `fromSeq` on; returns the stop (see SessionReads.follow). */
  follow(sessionId: string, fromSeq: number, listener: (record: LogRecord) => void): () => void {
    return this.#reads.follow(sessionId, fromSeq, listener);
  }

  /** Records a channel's view of a session (seen up to, streamed live); see SessionReads.setView. */
  setView(record: StoredSession, channel: string, on: boolean): Promise<void> {
    return this.#reads.setView(record, channel, on);
  }

  /** Moves the seen mark of a channel's view of a live session (see SessionReads.markSeen). */
  markSeen(sessionId: string, channel: string, seenSeq: number): void {
    this.#reads.markSeen(sessionId, channel, seenSeq);
  }

  /**
   * Cost, status counts, durations and the most expensive session, over every run ever recorded. Counts everything that
   * happened before the call: the rows' writes and the run ends still committing are waited for first (over
   * PostgreSQL's pool a session that just ended may not have its run's end committed yet); one that fails is left out.
   */
  async stats(): Promise<Awaited<ReturnType<CodingSessionStore['metrics']>>> {
    await Promise.allSettled([...this.#pool.values()].flatMap((session) => this.#runs.writes(session)));
    return this.#reads.stats();
  }

  /** Drops long-finished sessions from memory and evicts stored sessions beyond maxPersistedSessions. */
  cleanup(): Promise<{ released: number; evicted: number }> {
    return this.#cleanup.run();
  }

  /**
   * Daemon shutdown: stops timers, marks running sessions interrupted, stops every agent still running and waits for
   * its exit to be logged, then closes the logs. Once it resolves nothing writes to a session log (an agent's exit
   * handled later would reopen the log, after the owner may have removed the folder).
   */
  async stop(): Promise<void> {
    this.#admission.stopAdmitting();
    this.#cleanup.stop();
    const now = this.#deps.clock.now();
    const runsDone: Promise<unknown>[] = this.#runs.inFlight();
    for (const session of this.#pool.values()) {
      const active = session.isActive;
      session.shutdown();
      if (active) runsDone.push(this.#runs.end(session, now));
      runsDone.push(session.runDone);
    }
    const failed = (await Promise.allSettled(runsDone)).find((r) => r.status === 'rejected');
    await this.#deps.logs.closeAll();
    if (failed) throw failed.reason;
  }

  /** Writes an approval's current state to its session's log (the SSE stream and the web page show it). */
  recordApproval(approval: Approval): void {
    this.#deps.logs.write(approval.sessionId, { type: 'approval', approval });
  }
}

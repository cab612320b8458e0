// How sessions start on this node: a launch (now, or in its turn), a launch stored in the cluster's queue and one
// claimed from it, a resume (in place, or as a fork); each admitted through SessionAdmission, stored, then started as a
// Session whose persistence and signals go to the pool's bookkeeping (SessionRuns).
import type { Transaction } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName } from '../core/config.ts';
import { conflict, errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { LaunchSpec, Placement, SessionStatus, StoredSession } from '../store/coding-session-types.ts';
import { isActiveStatus } from '../store/coding-session-types.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { SessionLogs } from '../store/session-logs.ts';
import type { Database } from '../store/tables/index.ts';
import type { Harness } from './harness.ts';
import type { PermissionGate } from './permission-gate.ts';
import { Session } from './session.ts';
import type { LaunchExtra, LaunchRequest, SessionAdmission } from './session-admission.ts';
import type { SessionPool } from './session-pool.ts';
import type { SessionReads } from './session-reads.ts';
import type { SessionRuns } from './session-runs.ts';
import { checkWorkdir } from './workspace.ts';

const DEFAULT_RESUME_PROMPT = 'Continue where you left off.';

/** The options of a resume (see SessionManager.resume). */
export interface ResumeOptions {
  prompt?: string;
  fork?: boolean;
  originChannel?: string;
  via?: string;
}

/** What SessionLaunches uses. */
export interface SessionLaunchesDeps {
  config: Config;
  clock: Clock;
  logger: Logger;
  store: Pick<CodingSessionStore, 'insertLaunched' | 'insertQueued' | 'update' | 'startRun' | 'endRun'>;
  logs: Pick<SessionLogs, 'write' | 'prepare'>;
  harnesses: Record<HarnessName, Harness>;
  /** Where sessions' permission requests go (see SessionManagerDeps.permissions). */
  permissions?: PermissionGate;
  admission: SessionAdmission;
  pool: SessionPool;
  runs: SessionRuns;
  /** A resumed session's output buffer starts with the blocks of its log. */
  reads: Pick<SessionReads, 'outputBlocks'>;
}

/** Launches, queued launches and resumes of this node (see the file's comment). */
export class SessionLaunches {
  readonly #deps: SessionLaunchesDeps;

  /** Takes the gate launches pass, the pool they join, the runs that handle their signals and their storage. */
  constructor(deps: SessionLaunchesDeps) {
    this.#deps = deps;
  }

  /**
   * Validates a launch request against the config and limits, stores the session and starts it; resolves once the
   * session is stored. `extra.onStored` runs inside the transaction that stores the session (an idempotency key's
   * answer commits with the row).
   */
  launch(request: LaunchRequest, extra: LaunchExtra = {}): Promise<Session> {
    const head = this.#deps.admission.headSoon(request);
    return this.#deps.admission.admit(() => this.#launch(request, extra, undefined, head));
  }

  /**
   * `launch`'s work; `started` hears of the session the moment it started (before the promise settles); `head` is the
   * workdir's commit read ahead (see SessionAdmission.headSoon).
   */
  async #launch(
    request: LaunchRequest,
    extra: LaunchExtra = {},
    started?: (session: Session) => void,
    head?: Promise<string | null>,
  ): Promise<Session> {
    const { admission } = this.#deps;
    admission.refuseWhenStopping();
    admission.refuseWhenNotServing();
    const record = await admission.recordFor(request, extra, 'here', head);
    // Looked at again: the node may have been declared down while the request was checked.
    admission.refuseWhenNotServing();
    const now = record.startedAt;
    const onStored = extra.onStored;
    const runId = await this.#deps.store.insertLaunched(
      record,
      now,
      onStored ? (trx) => onStored(record, trx) : undefined,
    );
    this.#deps.logs.write(record.id, { type: 'created', session: record });
    const session = this.#start(record, 'launch', request.via, runId);
    started?.(session);
    return session;
  }

  /**
   * Stores a launch as a `queued` session of the cluster's queue (PostgreSQL), with where it may run; `also` runs in
   * the transaction that stores it (the NOTIFY, an idempotency key's answer). Resolves with the record once committed.
   * The caller checked that some node could ever run it.
   */
  async enqueue(
    request: LaunchRequest,
    placement: Placement,
    also?: (record: StoredSession, trx: Transaction<Database>) => Promise<void>,
    extra: { resumedFrom?: string } = {},
  ): Promise<StoredSession> {
    this.#deps.admission.refuseWhenStopping();
    const record = await this.#deps.admission.recordFor(request, extra, 'queue');
    await this.#deps.store.insertQueued(record, placement, also ? (trx) => also(record, trx) : undefined);
    return record;
  }

  /**
   * Starts a launch this node claims from the queue, in its turn among launches and resumes, when a slot is free:
   * `claim` (called only then) claims one and resolves with it, or null when none is left. Resolves with the started
   * session, or null when no slot was free, the daemon is stopping or nothing was claimed. `via`: the chat that typed
   * the launch, for the session of this id (its reply already shows it).
   */
  claimAndStart(
    claim: () => Promise<{ record: StoredSession; runId: number } | null>,
    via?: { id: string; via: string },
  ): Promise<Session | null> {
    const { admission, config, clock, store, logs } = this.#deps;
    return admission.admit(async () => {
      if (!admission.mayClaim()) return null;
      const claimed = await claim();
      if (!claimed) return null;
      const { record, runId } = claimed;
      let workdir: string;
      try {
        workdir = checkWorkdir(record.workdir, config.workspaces);
      } catch (error) {
        // Claimed by its workspace root, but not there on this disk: it fails here, said why, and is not retried.
        const now = clock.now();
        const failed = { status: 'failed', error: errorMessage(error), completedAt: now, updatedAt: now } as const;
        await store.update(record.id, failed);
        await store.endRun(runId, 'failed', 0, now);
        logs.write(record.id, { type: 'created', session: { ...record, ...failed } });
        return null;
      }
      const baseCommit = await admission.head(workdir);
      const started: StoredSession = {
        ...record,
        workdir,
        spec: { ...record.spec, workdir, ...(baseCommit ? { baseCommit } : {}) },
      };
      if (baseCommit || workdir !== record.workdir) await store.update(record.id, { workdir, spec: started.spec });
      logs.write(record.id, { type: 'created', session: started });
      return this.#start(started, 'launch', via?.id === record.id ? via.via : undefined, runId);
    });
  }

  /**
   * `launch`, in its turn: a burst of launches (each an fsync'd insert, a new log and a process spawn) runs one per
   * event-loop turn, so health checks, other requests and agent output are served between them.
   */
  launchSoon(request: LaunchRequest, extra: LaunchExtra = {}): Promise<Session> {
    // Settled the moment the session started, as a synchronous launch did: the caller's answer is not queued behind
    // what the start set off (the launch notice's delivery).
    const { admission } = this.#deps;
    const head = admission.headSoon(request);
    return new Promise<Session>((resolve, reject) => {
      admission.inTurn(() => admission.admit(() => this.#launch(request, extra, resolve, head))).catch(reject);
    });
  }

  /** `resume`, in its turn among launches and resumes (see launchSoon). */
  resumeSoon(ref: string, options: ResumeOptions = {}): Promise<Session> {
    return this.#deps.admission.inTurn(() => this.resume(ref, options));
  }

  /**
   * Resumes a session that is not running. In place by default (same id, name and log); with `fork`, as a new
   * session that continues the conversation in a new backend session. Resolves once the change is stored.
   */
  async resume(ref: string, options: ResumeOptions = {}): Promise<Session> {
    const { admission, config, clock, store, logs } = this.#deps;
    admission.refuseWhenStopping();
    admission.refuseWhenNotServing();
    const record = await this.#deps.pool.requireStored(ref);
    if (isActiveStatus(record.status))
      throw conflict(`session ${record.name} is ${record.status}; send it a message instead`);
    if (!record.backendSessionId) {
      throw conflict(
        `session ${record.name} cannot be resumed: its agent never reported a session id (it ${record.status} before starting)`,
      );
    }
    const prompt = options.prompt?.trim() ? options.prompt : DEFAULT_RESUME_PROMPT;
    if (options.fork) {
      return this.launch(
        {
          ...record.spec,
          prompt,
          name: `${record.name}-fork`,
          workdir: record.workdir,
          resumeSessionRef: record.backendSessionId,
          forkSession: true,
          originChannel: options.originChannel ?? record.originChannel,
          originSessionId: record.originSessionId,
          ...(options.via ? { via: options.via } : {}),
        },
        { resumedFrom: record.id },
      );
    }
    const workdir = checkWorkdir(record.workdir, config.workspaces);
    admission.checkCapacity();
    const now = clock.now();
    const spec: LaunchSpec = {
      ...record.spec,
      prompt,
      workdir,
      resumeBackendId: record.backendSessionId,
      forkSession: false,
    };
    const patch = {
      status: 'starting' as SessionStatus,
      spec,
      completedAt: null,
      error: null,
      endReason: null,
      budgetExhausted: false,
      updatedAt: now,
      autoResponds: 0,
      node: config.node.name,
      ...(options.originChannel ? { originChannel: options.originChannel } : {}),
    };
    return admission.admit(async () => {
      admission.checkCapacity();
      await store.update(record.id, patch);
      // It may have run on another node last: its log continues from the database's (cluster; no-op on SQLite).
      await logs.prepare(record.id);
      logs.write(record.id, { type: 'status', status: 'starting' });
      const resumed = { ...record, ...patch };
      const runId = await store.startRun(resumed, 'resume', clock.now());
      return this.#start(resumed, 'resume', options.via, runId);
    });
  }

  /** Starts a stored session as a live Session of the pool, its run `runId` open (a resume refills its output). */
  #start(record: StoredSession, kind: 'launch' | 'resume', via: string | undefined, runId: number): Session {
    const { store, logs, clock, logger, config, harnesses, runs } = this.#deps;
    const session = new Session(record, {
      harness: harnesses[record.harness],
      clock,
      logger,
      safetyNetMs: config.timings.safetyNetMs,
      idleTimeoutMs: config.idleTimeoutMinutes * 60_000,
      ...(this.#deps.permissions ? { permissions: this.#deps.permissions } : {}),
      persistence: {
        log: (entry) => logs.write(record.id, entry),
        update: async (patch) => {
          if (runs.isAbandoned(record.id)) return;
          const stored = store.update(record.id, patch);
          // Issued at once behind the row's write (writes commit in order), awaited with it.
          const cost = patch.costUsd !== undefined ? runs.recordCost(session) : undefined;
          await Promise.all([stored, cost]);
        },
      },
      onSignal: (signal) => runs.handle(signal),
    });
    if (kind === 'resume') {
      for (const block of this.#deps.reads.outputBlocks(record)) session.output.push(block.seq, block.text);
    }
    this.#deps.pool.add(record.id, session);
    runs.opened(record.id, runId);
    session.start(kind, via ? { via } : {});
    return session;
  }
}

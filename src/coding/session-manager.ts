import { resolve } from 'node:path';
import type { Transaction } from 'kysely';
import type { Clock, Timer } from '../core/clock.ts';
import type { Config, HarnessName, PermissionMode } from '../core/config.ts';
import { expandHome } from '../core/config-load.ts';
import { AppError, conflict, errorMessage, invalidInput, limitReached, notFound } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import { looksLikeUuid, newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { nextTurn, TurnGate } from '../core/turn-gate.ts';
import type { Approval } from '../store/approvals.ts';
import type {
  CodingSessionStore,
  LaunchSpec,
  Placement,
  SessionStatus,
  StoredSession,
} from '../store/coding-sessions.ts';
import { ACTIVE_STATUSES, isActiveStatus } from '../store/coding-sessions.ts';
import type { LogRecord } from '../store/jsonl-log.ts';
import type { RestartNoticeStore } from '../store/restart-notices.ts';
import type { SessionLogs, SessionRecordSource } from '../store/session-logs.ts';
import { localRecords } from '../store/session-logs.ts';
import type { Database } from '../store/tables/index.ts';
import { WorkdirHeads } from './git-head.ts';
import type { Harness } from './harness.ts';
import { interruptLostNode } from './lost-node.ts';
import { isValidName, nameFromPrompt, uniqueName } from './names.ts';
import { orphanReport, sweepOrphans } from './orphans.ts';
import type { PermissionGate } from './permission-gate.ts';
import type { SessionSignal } from './session.ts';
import { Session } from './session.ts';
import type { UserMessageSource } from './session-log.ts';
import type { TranscriptEntry, TranscriptView } from './transcript.ts';
import { transcriptOf } from './transcript.ts';
import { checkWorkdir } from './workspace.ts';

/** A launch as every surface asks for it; unset fields take the config defaults. */
export interface LaunchRequest {
  prompt: string;
  harness?: HarnessName;
  name?: string;
  workdir?: string;
  model?: string;
  maxBudgetUsd?: number;
  permissionMode?: PermissionMode;
  systemPrompt?: string;
  allowedTools?: string[];
  multiTurn?: boolean;
  /** Resume an earlier agent session: our id, our name, or the backend's own session id. */
  resumeSessionRef?: string;
  forkSession?: boolean;
  originChannel: string;
  /** The component that handles this session's events itself (see LaunchSpec.owner). */
  owner?: string;
  /** The watchdog's limits the node running it arms (see LaunchSpec.watchdog). */
  watchdog?: LaunchSpec['watchdog'];
  /** The engine session that launched it (wakes go back there). */
  originSessionId?: string | null;
  /** The chat channel a person typed the launch command in (it already shows the command's reply). */
  via?: string;
}

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

const DEFAULT_RESUME_PROMPT = 'Continue where you left off.';

/** The pool of coding sessions: limits, names, launch/resume/send/kill, restore after a restart, cleanup, metrics. */
export class SessionManager {
  #deps: SessionManagerDeps;
  #live = new Map<string, Session>();
  #runs = new Map<string, number>();
  #listeners = new Set<(signal: SessionSignal) => void>();
  #cleanupTimer: Timer | null = null;
  /** Set when stop() begins: from then on nothing launches or resumes a session (an engine turn still running would). */
  #stopping = false;
  /** Launches and resumes asked for at once go one per event-loop turn (see launchSoon). */
  #starts = new TurnGate();
  /** The launch or resume being admitted: each checks capacity and names against the ones admitted before it. */
  #admitting: Promise<unknown> | null = null;
  /** Run ends and cleanups started by a session's end; stop() waits for them. */
  #background = new Set<Promise<unknown>>();
  /** Run ends being recorded, by session id: kill() resolves only once its run's end committed (stats count it). */
  readonly #runEnds = new Map<string, Promise<void>>();
  /** Sessions ended by abandonAll: nothing more is stored or announced about them from this node. */
  readonly #abandoned = new Set<string>();
  /** The workdirs' HEAD reads under way, shared by the launches that ask at once. */
  readonly #heads = new WorkdirHeads();

  constructor(deps: SessionManagerDeps) {
    this.#deps = deps;
  }

  /** Subscribes to every session's signals (output, tool, waiting, ended, …); returns the unsubscribe function. */
  on(listener: (signal: SessionSignal) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
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
   * Returns the ids whose notice is owed, as restore does. `spareLive`: leaves the sessions live in this manager alone
   * (this node, declared down while it ran, marks what it left behind after `abandonAll`).
   */
  interruptNode(node: string, options: { spareLive?: boolean } = {}): Promise<string[]> {
    return interruptLostNode(this.#deps, node, options.spareLive ? (id) => this.#live.has(id) : undefined);
  }

  /** Records that the notices of these interrupted sessions (chat and orchestrator) are stored; restore owes them no more. */
  async restartNoticesStored(sessionIds: readonly string[]): Promise<void> {
    await this.#deps.notices?.done(sessionIds);
  }

  /** Starts the periodic cleanup (every `timings.cleanupIntervalMs`). */
  startTimers(): void {
    this.#cleanupTimer ??= this.#deps.clock.every(
      this.#deps.config.timings.cleanupIntervalMs,
      () => void this.cleanup(),
    );
  }

  /**
   * Validates a launch request against the config and limits, stores the session and starts it; resolves once the
   * session is stored. `extra.onStored` runs inside the transaction that stores the session (an idempotency key's
   * answer commits with the row).
   */
  launch(
    request: LaunchRequest,
    extra: {
      resumedFrom?: string;
      onStored?: (record: StoredSession, trx: Transaction<Database>) => Promise<void>;
    } = {},
  ): Promise<Session> {
    const head = this.#headSoon(request);
    return this.#admit(() => this.#launch(request, extra, undefined, head));
  }

  /**
   * The commit the requested workdir is at, read now, before the launch waits for its turn: launches are admitted one
   * at a time, and reading HEAD takes several trips to the thread pool (walking up to the repository), which a burst
   * of launches would otherwise make one after another. Undefined when the workdir is refused (the launch says why in
   * its turn). The launch awaits it, so a failure is the launch's.
   */
  #headSoon(request: LaunchRequest): Promise<string | null> | undefined {
    let workdir: string;
    try {
      workdir = checkWorkdir(
        request.workdir ?? this.#deps.config.defaultWorkdir ?? process.cwd(),
        this.#deps.config.workspaces,
      );
    } catch {
      return undefined;
    }
    const head = this.#heads.read(workdir);
    // Awaited by the launch in its turn; until then a rejection is not unhandled (the launch rethrows it).
    head.catch(() => undefined);
    return head;
  }

  /**
   * `launch`'s work; `started` hears of the session the moment it started (before the promise settles); `head` is the
   * workdir's commit read ahead (see #headSoon).
   */
  async #launch(
    request: LaunchRequest,
    extra: Parameters<SessionManager['launch']>[1] = {},
    started?: (session: Session) => void,
    head?: Promise<string | null>,
  ): Promise<Session> {
    this.#refuseWhenStopping();
    this.#refuseWhenNotServing();
    const record = await this.#recordFor(request, extra, 'here', head);
    // Looked at again: the node may have been declared down while the request was checked.
    this.#refuseWhenNotServing();
    const now = record.startedAt;
    const onStored = extra.onStored;
    const runId = await this.#deps.store.insertLaunched(
      record,
      now,
      onStored ? (trx) => onStored(record, trx) : undefined,
    );
    this.#deps.logs.write(record.id, { type: 'created', session: record });
    const session = this.#startSession(record, 'launch', request.via, runId);
    started?.(session);
    return session;
  }

  /**
   * The stored session a launch request makes, validated against the config (`here`: to start on this node now, its
   * workdir checked on this disk and a slot free; `queue`: to wait in the cluster's queue, its workdir only resolved,
   * the placement checked by the caller).
   */
  async #recordFor(
    request: LaunchRequest,
    extra: { resumedFrom?: string },
    mode: 'here' | 'queue',
    /** The workdir's HEAD, read ahead of the launch's turn (see launchSoon). */
    head?: Promise<string | null>,
  ): Promise<StoredSession> {
    const { config, clock, store } = this.#deps;
    const harnessName = request.harness ?? config.defaultHarness;
    const harness = this.#deps.harnesses[harnessName];
    const requested = request.workdir ?? config.defaultWorkdir ?? process.cwd();
    const workdir = mode === 'here' ? checkWorkdir(requested, config.workspaces) : resolve(expandHome(requested));
    if (mode === 'here') this.#checkCapacity();
    if (request.name !== undefined && !isValidName(request.name)) {
      throw invalidInput('name: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit', 'name');
    }
    let resumeBackendId: string | undefined;
    if (request.resumeSessionRef) {
      resumeBackendId = await this.#backendIdFor(request.resumeSessionRef);
      if (request.forkSession && !harness.supportsFork) {
        throw invalidInput(`forkSession: the ${harnessName} harness cannot fork a session`, 'forkSession');
      }
    }
    const baseCommit = mode === 'here' ? await (head ?? this.#heads.read(workdir)) : null;
    const spec: LaunchSpec = {
      harness: harnessName,
      prompt: request.prompt,
      workdir,
      maxBudgetUsd: request.maxBudgetUsd ?? config.defaultBudgetUsd,
      permissionMode: request.permissionMode ?? config.permissionMode,
      multiTurn: request.multiTurn ?? true,
      forkSession: Boolean(resumeBackendId && request.forkSession),
      ...(request.owner ? { owner: request.owner } : {}),
      ...(request.watchdog ? { watchdog: request.watchdog } : {}),
      ...((request.model ?? config.defaultModel) ? { model: request.model ?? config.defaultModel } : {}),
      ...(request.systemPrompt ? { systemPrompt: request.systemPrompt } : {}),
      ...(request.allowedTools ? { allowedTools: request.allowedTools } : {}),
      ...(resumeBackendId ? { resumeBackendId } : {}),
      ...(baseCommit ? { baseCommit } : {}),
    };
    const now = clock.now();
    return {
      id: newId(),
      name: await uniqueName(request.name ?? nameFromPrompt(request.prompt), (n) => store.nameTaken(n)),
      harness: harnessName,
      status: mode === 'here' ? 'starting' : 'queued',
      prompt: request.prompt,
      workdir,
      model: spec.model ?? null,
      backendSessionId: spec.forkSession ? null : (resumeBackendId ?? null),
      originChannel: request.originChannel,
      originSessionId: request.originSessionId ?? null,
      spec,
      costUsd: 0,
      startedAt: now,
      completedAt: null,
      updatedAt: now,
      error: null,
      endReason: null,
      budgetExhausted: false,
      foreground: {},
      autoResponds: 0,
      resumedFrom: extra.resumedFrom ?? null,
      forked: spec.forkSession,
      pid: null,
      node: mode === 'here' ? config.node.name : null,
    };
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
    this.#refuseWhenStopping();
    const record = await this.#recordFor(request, extra, 'queue');
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
    return this.#admit(async () => {
      if (this.#stopping || this.#freeSlots() <= 0 || this.#deps.serving?.() === false) return null;
      const claimed = await claim();
      if (!claimed) return null;
      const { record, runId } = claimed;
      let workdir: string;
      try {
        workdir = checkWorkdir(record.workdir, this.#deps.config.workspaces);
      } catch (error) {
        // Claimed by its workspace root, but not there on this disk: it fails here, said why, and is not retried.
        const now = this.#deps.clock.now();
        const failed = { status: 'failed', error: errorMessage(error), completedAt: now, updatedAt: now } as const;
        await this.#deps.store.update(record.id, failed);
        await this.#deps.store.endRun(runId, 'failed', 0, now);
        this.#deps.logs.write(record.id, { type: 'created', session: { ...record, ...failed } });
        return null;
      }
      const baseCommit = await this.#heads.read(workdir);
      const started: StoredSession = {
        ...record,
        workdir,
        spec: { ...record.spec, workdir, ...(baseCommit ? { baseCommit } : {}) },
      };
      if (baseCommit || workdir !== record.workdir)
        await this.#deps.store.update(record.id, { workdir, spec: started.spec });
      this.#deps.logs.write(record.id, { type: 'created', session: started });
      return this.#startSession(started, 'launch', via?.id === record.id ? via.via : undefined, runId);
    });
  }

  /** Runs `admission` after the launches and resumes admitted before it have stored and started their session. */
  #admit<T>(admission: () => Promise<T>): Promise<T> {
    // None under way: admitted at once (no extra turn between the start and its caller's answer). Otherwise in a later
    // turn than the one before it: an admission whose awaits all resolve at once (a HEAD read shared with the launch
    // before it, a SQLite insert) would else run the whole queue of a burst in one turn, and /healthz would wait.
    const result = this.#admitting ? this.#admitting.then(nextTurn).then(admission) : admission();
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.#admitting = settled;
    void settled.then(() => {
      if (this.#admitting === settled) this.#admitting = null;
    });
    return result;
  }

  /**
   * `launch`, in its turn: a burst of launches (each an fsync'd insert, a new log and a process spawn) runs one per
   * event-loop turn, so health checks, other requests and agent output are served between them.
   */
  launchSoon(request: LaunchRequest, extra: Parameters<SessionManager['launch']>[1] = {}): Promise<Session> {
    // Settled the moment the session started, as a synchronous launch did: the caller's answer is not queued behind
    // what the start set off (the launch notice's delivery).
    const head = this.#headSoon(request);
    return new Promise<Session>((resolve, reject) => {
      this.#starts.run(() => this.#admit(() => this.#launch(request, extra, resolve, head))).catch(reject);
    });
  }

  /** `resume`, in its turn among launches and resumes (see launchSoon). */
  resumeSoon(ref: string, options: Parameters<SessionManager['resume']>[1] = {}): Promise<Session> {
    return this.#starts.run(() => this.resume(ref, options));
  }

  /**
   * Resumes a session that is not running. In place by default (same id, name and log); with `fork`, as a new
   * session that continues the conversation in a new backend session. Resolves once the change is stored.
   */
  async resume(
    ref: string,
    options: { prompt?: string; fork?: boolean; originChannel?: string; via?: string } = {},
  ): Promise<Session> {
    this.#refuseWhenStopping();
    this.#refuseWhenNotServing();
    const record = await this.#requireStored(ref);
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
    const workdir = checkWorkdir(record.workdir, this.#deps.config.workspaces);
    this.#checkCapacity();
    const now = this.#deps.clock.now();
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
      node: this.#deps.config.node.name,
      ...(options.originChannel ? { originChannel: options.originChannel } : {}),
    };
    return this.#admit(async () => {
      this.#checkCapacity();
      await this.#deps.store.update(record.id, patch);
      // It may have run on another node last: its log continues from the database's (cluster; no-op on SQLite).
      await this.#deps.logs.prepare(record.id);
      this.#deps.logs.write(record.id, { type: 'status', status: 'starting' });
      const resumed = { ...record, ...patch };
      const runId = await this.#deps.store.startRun(resumed, 'resume', this.#deps.clock.now());
      return this.#startSession(resumed, 'resume', options.via, runId);
    });
  }

  /**
   * Sends a message to a running session. Agent-sent messages count against maxAutoResponds; a user's message
   * resets the count. Resolves once the message's record in the session's log is durable (fdatasync'd, and committed
   * to the database in a cluster), so a message acknowledged is never missing from the transcript after a crash.
   * Returns the session and whether the text answered a permission request.
   */
  async send(
    ref: string,
    text: string,
    options: { source: UserMessageSource; interrupt?: boolean; via?: string; by?: string },
  ): Promise<{ session: Session; result: 'sent' | 'answered' }> {
    const session = await this.#requireLive(ref);
    const approvalId = session.pendingPermission?.approval?.id;
    const { permissions } = this.#deps;
    if (approvalId && permissions) {
      // A message to a session that waits for an approval decides it (the approval's decision, so every surface shows it).
      await permissions.answerText(approvalId, text, options.by ?? options.via ?? options.source);
      return { session, result: 'answered' };
    }
    const { maxAutoResponds } = this.#deps.config;
    if (options.source === 'agent') {
      if (session.record.autoResponds >= maxAutoResponds) {
        throw limitReached(
          `auto-respond limit reached for session ${session.name}: ${maxAutoResponds} agent responses without a user reply (maxAutoResponds). Ask the user to answer; their reply resets the count.`,
        );
      }
      await session.patch({ autoResponds: session.record.autoResponds + 1 });
    } else if (session.record.autoResponds !== 0) {
      await session.patch({ autoResponds: 0 });
    }
    const result = await session.send(text, options);
    await this.#deps.logs.sync(session.id);
    return { session, result };
  }

  /**
   * Kills a running session; throws when it is unknown or already ended. `via` is the chat the kill command came
   * from, if any. Resolves with the final record once it is stored. A session in memory given by its id is killed at
   * once (a watchdog's kill takes effect before it returns); other refs are looked up first.
   */
  kill(ref: string, reason = 'killed by user', options: { via?: string } = {}): Promise<StoredSession> {
    const byId = this.#live.get(ref);
    if (byId) return this.#kill({ ...byId.record }, reason, options);
    return this.#requireStored(ref).then((record) => this.#kill(record, reason, options));
  }

  async #kill(record: StoredSession, reason: string, options: { via?: string }): Promise<StoredSession> {
    if (record.status === 'queued') {
      // A queued launch never starts; if a node claimed it meanwhile, it is killed as a running session.
      const cancelled = await this.#deps.store.cancelQueued(record.id, reason, this.#deps.clock.now());
      if (cancelled) return cancelled;
      record = await this.#requireStored(record.id);
    }
    const session = this.#live.get(record.id);
    if (!session || !session.kill(reason, options.via))
      throw conflict(`session ${record.name} is already ${record.status}`);
    const final = { ...session.record };
    // The row and the run's end (over PostgreSQL's pool neither is done by the time the kill's signal went out).
    await Promise.all([session.stored, this.#runEnds.get(record.id)]);
    return final;
  }

  /** Kills every running session (used by tests and an explicit "kill all"); returns how many. */
  killAll(reason = 'killed'): number {
    let n = 0;
    for (const session of this.#live.values()) if (session.kill(reason)) n += 1;
    return n;
  }

  /**
   * Ends every live agent of this node without storing or announcing anything more about its session (its row, its
   * run, its signals): for a node the cluster declared lost while it ran, whose sessions another node marks (or has
   * marked) interrupted and announced. Returns how many agents were stopped.
   */
  abandonAll(reason: string): number {
    let n = 0;
    for (const [id, session] of [...this.#live]) {
      this.#abandoned.add(id);
      this.#runs.delete(id);
      this.#live.delete(id);
      if (session.kill(reason)) n += 1;
    }
    return n;
  }

  /** The live Session for a ref (id, name or backend id), if it is in memory. */
  async live(ref: string): Promise<Session | undefined> {
    const byId = this.#live.get(ref);
    if (byId) return byId;
    const record = await this.#deps.store.resolve(ref);
    return record ? this.#live.get(record.id) : undefined;
  }

  /** The live Session with this internal id, if it is in memory (no store lookup). */
  liveById(id: string): Session | undefined {
    return this.#live.get(id);
  }

  /** The stored record for a ref (id, name or backend id); throws not_found. */
  get(ref: string): Promise<StoredSession> {
    return this.#requireStored(ref);
  }

  /** All stored sessions, newest first, optionally filtered by status. */
  list(statuses?: readonly SessionStatus[]): Promise<StoredSession[]> {
    return this.#deps.store.list(statuses);
  }

  /** One page of stored sessions, newest first (see CodingSessionStore.page). */
  page(options: Parameters<CodingSessionStore['page']>[0]): ReturnType<CodingSessionStore['page']> {
    return this.#deps.store.page(options);
  }

  /** Sessions starting or running per node of the cluster (one grouped query). */
  activeByNode(): Promise<Map<string, number>> {
    return this.#deps.store.activeByNode();
  }

  /** Sessions currently in memory. */
  liveSessions(): Session[] {
    return [...this.#live.values()];
  }

  /** Last output blocks of a session (live buffer, or read back from its log), with their log seqs. */
  outputBlocks(record: StoredSession, afterSeq = 0): { seq: number; text: string }[] {
    const live = this.#live.get(record.id);
    if (live && live.output.covers(afterSeq)) return live.output.after(afterSeq);
    return outputOf(this.#deps.logs.read(record.id, afterSeq + 1));
  }

  /** Like `outputBlocks` (all of them), for a session on any node of the cluster. */
  async readOutputBlocks(record: StoredSession): Promise<{ seq: number; text: string }[]> {
    if (!this.#deps.records || this.#live.has(record.id)) return this.outputBlocks(record);
    return outputOf(await this.#deps.records.read(record.id));
  }

  /** What a session did, read back from its log: text, tool calls and permission requests (`text`: text only). */
  transcript(record: StoredSession, view: TranscriptView = 'all'): TranscriptEntry[] {
    return transcriptOf(this.#deps.logs.read(record.id), view);
  }

  /** Sequence number of the newest record of a session's log. */
  lastSeq(sessionId: string): number {
    return this.#deps.logs.lastSeq(sessionId);
  }

  /** Like `transcript`, for a session on any node of the cluster (read from the database when it is not live here). */
  async readTranscript(record: StoredSession, view: TranscriptView = 'all'): Promise<TranscriptEntry[]> {
    if (!this.#deps.records || this.#live.has(record.id)) return this.transcript(record, view);
    return transcriptOf(await this.#deps.records.read(record.id), view);
  }

  /** Like `lastSeq`, for a session on any node of the cluster. */
  async readLastSeq(sessionId: string): Promise<number> {
    if (!this.#deps.records || this.#live.has(sessionId)) return this.lastSeq(sessionId);
    return this.#deps.records.lastSeq(sessionId);
  }

  /**
   * Calls `listener` with every record of a session on any node of the cluster from `fromSeq` on, each once and in
   * order (see SessionRecordSource.follow); returns the function that stops it.
   */
  follow(sessionId: string, fromSeq: number, listener: (record: LogRecord) => void): () => void {
    return (this.#deps.records ?? localRecords(this.#deps.logs)).follow(sessionId, fromSeq, listener);
  }

  /**
   * Records that a channel has seen a session up to its newest log record and whether it streams it live (claude_fg /
   * claude_bg). Written to the log as a `foreground` record; a live session signals `view`. Resolves once stored.
   */
  async setView(record: StoredSession, channel: string, on: boolean): Promise<void> {
    const view = { on, seenSeq: this.lastSeq(record.id) };
    const live = this.#live.get(record.id);
    if (live) {
      await live.setView(channel, view);
      return;
    }
    await this.#deps.logs.prepare(record.id);
    this.#deps.logs.write(record.id, { type: 'foreground', channel, on });
    await this.#deps.store.update(record.id, { foreground: { ...record.foreground, [channel]: view } });
  }

  /**
   * Moves the "seen up to" log seq of a channel that already has a view of a live session (the notifier, after it
   * delivered streamed text or dropped undelivered text). No-op for a session not in memory or an unknown channel.
   */
  markSeen(sessionId: string, channel: string, seenSeq: number): void {
    this.#live.get(sessionId)?.markSeen(channel, seenSeq);
  }

  /** Cost, status counts, durations and the most expensive session, over every run ever recorded. */
  stats(): ReturnType<CodingSessionStore['metrics']> {
    return this.#deps.store.metrics();
  }

  /** Drops long-finished sessions from memory and evicts stored sessions beyond maxPersistedSessions. */
  async cleanup(): Promise<{ released: number; evicted: number }> {
    const { clock, config, store, logs } = this.#deps;
    const now = clock.now();
    let released = 0;
    for (const [id, session] of this.#live) {
      const completedAt = session.record.completedAt;
      if (
        !session.isActive &&
        !session.attached &&
        completedAt !== null &&
        now - completedAt > config.timings.cleanupMaxAgeMs
      ) {
        this.#live.delete(id);
        await logs.release(id);
        released += 1;
      }
    }
    const evict = (await store.evictionCandidates(config.maxPersistedSessions)).filter(
      (id) => !this.#live.get(id)?.attached,
    );
    for (const id of evict) {
      this.#live.delete(id);
      await store.delete(id);
      logs.remove(id);
    }
    return { released, evicted: evict.length };
  }

  /**
   * Daemon shutdown: stops timers, marks running sessions interrupted, stops every agent still running and waits for
   * its exit to be logged, then closes the logs. Once it resolves nothing writes to a session log (an agent's exit
   * handled later would reopen the log, after the owner may have removed the folder).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#cleanupTimer?.cancel();
    this.#cleanupTimer = null;
    const now = this.#deps.clock.now();
    const runsDone: Promise<unknown>[] = [...this.#background];
    for (const session of this.#live.values()) {
      const active = session.isActive;
      session.shutdown();
      if (active) runsDone.push(this.#endRun(session, now));
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

  /** Throws once stop() has begun: a session started then would outlive the daemon's stop (and its closed logs). */
  #refuseWhenStopping(): void {
    if (this.#stopping) throw conflict('the daemon is stopping: no coding session can be launched or resumed now');
  }

  #refuseWhenNotServing(): void {
    if (this.#deps.serving?.() !== false) return;
    const node = this.#deps.config.node.name;
    throw new AppError('unavailable', `unavailable: node ${node} is not serving (it is rejoining the cluster)`);
  }

  #startSession(record: StoredSession, kind: 'launch' | 'resume', via: string | undefined, runId: number): Session {
    const { store, logs, clock, logger, config, harnesses } = this.#deps;
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
          if (this.#abandoned.has(record.id)) return;
          const stored = store.update(record.id, patch);
          // Issued at once behind the row's write (writes commit in order), awaited with it.
          const cost = patch.costUsd !== undefined ? this.#recordRunCost(session) : undefined;
          await Promise.all([stored, cost]);
        },
      },
      onSignal: (signal) => this.#onSignal(signal),
    });
    if (kind === 'resume') {
      for (const block of this.outputBlocks(record)) session.output.push(block.seq, block.text);
    }
    this.#live.set(record.id, session);
    this.#runs.set(record.id, runId);
    session.start(kind, via ? { via } : {});
    return session;
  }

  #onSignal(signal: SessionSignal): void {
    if (this.#abandoned.has(signal.session.id)) return;
    if (signal.type === 'ended') {
      const { logger } = this.#deps;
      const id = signal.session.id;
      const runEnd = this.#endRun(signal.session, this.#deps.clock.now());
      this.#runEnds.set(id, runEnd);
      this.#inBackground(
        runEnd.finally(() => {
          if (this.#runEnds.get(id) === runEnd) this.#runEnds.delete(id);
        }),
        (error) => logger.error({ err: error }, 'recording a run end failed'),
      );
      this.#inBackground(this.cleanup(), (error) => logger.error({ err: error }, 'session cleanup failed'));
      const { permissions } = this.#deps;
      if (permissions)
        this.#inBackground(
          permissions.cancelSession(signal.session.id, 'The session ended before anyone answered.'),
          (error) => logger.error({ err: error }, 'cancelling the approvals of an ended session failed'),
        );
    }
    for (const listener of this.#listeners) {
      try {
        listener(signal);
      } catch (error) {
        this.#deps.logger.error({ err: error, signal: signal.type }, 'session listener failed');
      }
    }
  }

  /** Tracks work a signal started (stop() waits for it); `failed` reports its error. */
  #inBackground(work: Promise<unknown>, failed: (error: unknown) => void): void {
    const tracked = work.catch(failed).finally(() => this.#background.delete(tracked));
    this.#background.add(tracked);
  }

  /** Keeps the open run's cost current (stats count running sessions; a crash keeps what the run spent). */
  async #recordRunCost(session: Session): Promise<void> {
    const runId = this.#runs.get(session.id);
    if (runId !== undefined) await this.#deps.store.setRunCost(runId, session.runCostUsd);
  }

  async #endRun(session: Session, at: number): Promise<void> {
    const runId = this.#runs.get(session.id);
    if (runId === undefined) return;
    this.#runs.delete(session.id);
    await this.#deps.store.endRun(runId, session.status, session.runCostUsd, at);
  }

  /** Slots free on this node: `maxSessions` less the sessions starting or running here. */
  #freeSlots(): number {
    return this.#deps.config.maxSessions - [...this.#live.values()].filter((s) => s.isActive).length;
  }

  #checkCapacity(): void {
    const active = [...this.#live.values()].filter((s) => s.isActive);
    const max = this.#deps.config.maxSessions;
    if (active.length >= max) {
      throw limitReached(
        `maxSessions limit reached: ${active.length} of ${max} sessions are running (${active.map((s) => s.name).join(', ')}). Kill one or raise maxSessions in the config.`,
      );
    }
  }

  async #backendIdFor(ref: string): Promise<string> {
    const record = await this.#deps.store.resolve(ref);
    if (record?.backendSessionId) return record.backendSessionId;
    if (record) throw conflict(`session ${record.name} cannot be resumed: its agent never reported a session id`);
    if (looksLikeUuid(ref)) return ref;
    throw notFound(`no session "${ref}" to resume (give a session id, name, or the agent's own session id)`);
  }

  async #requireStored(ref: string): Promise<StoredSession> {
    const byId = this.#live.get(ref);
    if (byId) return { ...byId.record };
    const record = await this.#deps.store.resolve(ref);
    if (!record) throw notFound(`no session "${ref}" (give a session id, name, or the agent's own session id)`);
    const live = this.#live.get(record.id);
    return live ? { ...live.record } : record;
  }

  async #requireLive(ref: string): Promise<Session> {
    const record = await this.#requireStored(ref);
    const session = this.#live.get(record.id);
    if (record.status === 'queued')
      throw conflict(
        `session ${record.name} is queued: it waits for a node with a free slot (kill ${record.name} to drop it)`,
      );
    if (!session || !session.isActive) {
      throw conflict(`session ${record.name} is ${record.status}; resume it first (resume ${record.name})`);
    }
    return session;
  }
}

/** The output blocks among a log's records, with their seqs. */
function outputOf(records: readonly LogRecord[]): { seq: number; text: string }[] {
  return records
    .filter((r) => r.type === 'output' && typeof r.text === 'string')
    .map((r) => ({ seq: r.seq, text: r.text as string }));
}

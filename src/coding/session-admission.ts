// Whether and when a launch or resume may start on this node: refused once the daemon stops or while the node does not
// serve, held to `maxSessions`, let through one per event-loop turn and admitted one at a time; and the stored session a
// launch request makes (validated against the config, its workdir's HEAD read ahead of its turn).
import type { Transaction } from 'kysely';
import type { Clock } from '../core/clock.ts';
import type { Config, HarnessName, PermissionMode } from '../core/config.ts';
import { AppError, conflict, invalidInput, limitReached, notFound } from '../core/errors.ts';
import { looksLikeUuid, newId } from '../core/ids.ts';
import { nextTurn, TurnGate } from '../core/turn-gate.ts';
import type { LaunchSpec, StoredSession } from '../store/coding-session-types.ts';
import type { CodingSessionStore } from '../store/coding-sessions.ts';
import type { Database } from '../store/tables/index.ts';
import { WorkdirHeads } from './git-head.ts';
import type { Harness } from './harness.ts';
import { isValidName, nameFromPrompt, uniqueName } from './names.ts';
import type { SessionPool } from './session-pool.ts';
import { absoluteWorkdir, checkWorkdir } from './workspace.ts';

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

/** A launch's options besides its request: the session it forks, and what commits with its row (see launch). */
export interface LaunchExtra {
  resumedFrom?: string;
  onStored?: (record: StoredSession, trx: Transaction<Database>) => Promise<void>;
}

/** What SessionAdmission uses. */
export interface SessionAdmissionDeps {
  config: Config;
  clock: Clock;
  store: Pick<CodingSessionStore, 'nameTaken' | 'resolve'>;
  harnesses: Record<HarnessName, Harness>;
  /** False while this node does not serve (see SessionManagerDeps.serving); default always serving. */
  serving?: () => boolean;
  pool: SessionPool;
}

/** The gate every launch and resume of this node passes, and the record a launch request makes (see the file). */
export class SessionAdmission {
  readonly #deps: SessionAdmissionDeps;
  /** Set when stop() begins: from then on nothing launches or resumes a session (an engine turn still running would). */
  #stopping = false;
  /** Launches and resumes asked for at once go one per event-loop turn (see launchSoon). */
  readonly #starts = new TurnGate();
  /** The launch or resume being admitted: each checks capacity and names against the ones admitted before it. */
  #admitting: Promise<unknown> | null = null;
  /** The workdirs' HEAD reads under way, shared by the launches that ask at once. */
  readonly #heads = new WorkdirHeads();

  /** Takes the config, the store (names, resume refs), the harnesses and the pool whose slots it counts. */
  constructor(deps: SessionAdmissionDeps) {
    this.#deps = deps;
  }

  /** From now on every launch and resume is refused (the daemon is stopping). */
  stopAdmitting(): void {
    this.#stopping = true;
  }

  /** Runs `job` in its turn: the jobs asked for before it each ran in an earlier turn of the event loop. */
  inTurn<T>(job: () => T | PromiseLike<T>): Promise<T> {
    return this.#starts.run(job);
  }

  /** Runs `admission` after the launches and resumes admitted before it have stored and started their session. */
  admit<T>(admission: () => Promise<T>): Promise<T> {
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
   * The commit the requested workdir is at, read now, before the launch waits for its turn: launches are admitted one
   * at a time, and reading HEAD takes several trips to the thread pool (walking up to the repository), which a burst
   * of launches would otherwise make one after another. Undefined when the workdir is refused (the launch says why in
   * its turn). The launch awaits it, so a failure is the launch's.
   */
  headSoon(request: LaunchRequest): Promise<string | null> | undefined {
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

  /** The commit `workdir` is at (null outside git or without commits), sharing a read under way. */
  head(workdir: string): Promise<string | null> {
    return this.#heads.read(workdir);
  }

  /**
   * The stored session a launch request makes, validated against the config (`here`: to start on this node now, its
   * workdir checked on this disk and a slot free; `queue`: to wait in the cluster's queue, its workdir only resolved,
   * the placement checked by the caller).
   */
  async recordFor(
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
    const workdir = mode === 'here' ? checkWorkdir(requested, config.workspaces) : absoluteWorkdir(requested);
    if (mode === 'here') this.checkCapacity();
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

  /** Whether a launch claimed from the queue may start now: not stopping, a slot free, and this node serving. */
  mayClaim(): boolean {
    return !(this.#stopping || this.#freeSlots() <= 0 || this.#deps.serving?.() === false);
  }

  /** Throws once stop() has begun: a session started then would outlive the daemon's stop (and its closed logs). */
  refuseWhenStopping(): void {
    if (this.#stopping) throw conflict('the daemon is stopping: no coding session can be launched or resumed now');
  }

  /** Throws `unavailable` while this node does not serve (the cluster declared it down, until it rejoined). */
  refuseWhenNotServing(): void {
    if (this.#deps.serving?.() !== false) return;
    const node = this.#deps.config.node.name;
    throw new AppError('unavailable', `unavailable: node ${node} is not serving (it is rejoining the cluster)`);
  }

  /** Throws a `limit` error when `maxSessions` sessions are starting or running here. */
  checkCapacity(): void {
    const active = this.#deps.pool.active();
    const max = this.#deps.config.maxSessions;
    if (active.length >= max) {
      throw limitReached(
        `maxSessions limit reached: ${active.length} of ${max} sessions are running (${active.map((s) => s.name).join(', ')}). Kill one or raise maxSessions in the config.`,
      );
    }
  }

  /** Slots free on this node: `maxSessions` less the sessions starting or running here. */
  #freeSlots(): number {
    return this.#deps.config.maxSessions - this.#deps.pool.active().length;
  }

  async #backendIdFor(ref: string): Promise<string> {
    const record = await this.#deps.store.resolve(ref);
    if (record?.backendSessionId) return record.backendSessionId;
    if (record) throw conflict(`session ${record.name} cannot be resumed: its agent never reported a session id`);
    if (looksLikeUuid(ref)) return ref;
    throw notFound(`no session "${ref}" to resume (give a session id, name, or the agent's own session id)`);
  }
}

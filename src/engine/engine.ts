// The agent engine: engine sessions (user, cron, heartbeat, subagent) with a durable inbox each, one loop per session
// (strictly in order, one message per turn; sessions run concurrently), routing between sessions, and restore after
// a restart. Every message is on disk before it is acknowledged; every turn writes turn_start before any work and
// turn_end after its reply is recorded and handed on.
import { z } from 'zod';
import type { InboundMessage, Outbox } from '../channels/connector.ts';
import { formatTarget, parseTarget } from '../channels/connector.ts';
import { backoffDelay } from '../core/backoff.ts';
import type { Clock, Timer } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { AppError, errorMessage, fromZodError, invalidInput, limitReached, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { StepResult } from '../core/work-loop.ts';
import { WorkLoop } from '../core/work-loop.ts';
import type { Inference } from '../inference/types.ts';
import { isFenced } from '../store/cluster-fence.ts';
import type { EngineIndex } from '../store/engine-index.ts';
import type { EngineLogs } from '../store/engine-logs.ts';
import type { Accepted, EngineControl, EngineSessionSummary, MessageRoute, PostOptions } from './api.ts';
import { originOf, userDescriptor } from './descriptor.ts';
import { Inbox, systemEntry } from './inbox.ts';
import { loadSessions } from './restore.ts';
import { heartbeatSession, mostRecentForeground, resolveRoute } from './routing.ts';
import type { EngineSession, ReplyWaiter } from './session.ts';
import type { AgentToolbox } from './toolbox.ts';
import { TurnRunner } from './turns.ts';

export interface EngineDeps {
  /** Reads `engine.*`. */
  config: Config;
  clock: Clock;
  logger: Logger;
  logs: EngineLogs;
  index: EngineIndex;
  inference: Inference;
  outbox: Outbox;
  /** Every tool the sessions' models may call (operations/toolbox.ts: the operations table); the engine has none of its own. */
  toolbox: AgentToolbox;
}

type EngineState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

const inboundSchema = z.object({
  id: z.string().trim().min(1, 'the connector message id is required'),
  userId: z.string().trim().min(1, 'the sender id is required'),
  text: z.string().refine((t) => t.trim().length > 0, 'the message has no text'),
  target: z.object({ channel: z.string().min(1), chat: z.string().min(1) }).loose(),
});

const nonEmpty = (field: string) => z.string().trim().min(1, `${field} must not be empty`);
const scheduledSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('cron'), id: nonEmpty('id') }),
  z.strictObject({ type: z.literal('heartbeat') }),
]);
/** A system post: text and origin, and an optional caller-chosen message id that makes a repeated post a duplicate. */
const postSchema = z.object({
  text: nonEmpty('text'),
  origin: nonEmpty('origin'),
  messageId: z.string().trim().min(1, 'messageId must not be empty').max(200).optional(),
});
const agentInput = z.object({
  prompt: nonEmpty('prompt'),
  name: nonEmpty('name').max(64),
  parentSessionId: z.string().min(1).optional(),
});

function check<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(result.error);
  return result.data;
}

/** The EngineApi implementation; build it with createEngine, then start() it (again after a stop: it restores anew). */
export class Engine implements EngineControl {
  #deps: EngineDeps;
  #inbox: Inbox;
  #turns: TurnRunner;
  /** One loop per engine session, made at its first kick. */
  #loops = new Map<string, WorkLoop>();
  #state: EngineState = 'new';
  #flushTimer: Timer | null = null;

  /** Counts the engine's starts: the inbox, turns and loops of an earlier run see themselves closed. */
  #run = 0;

  constructor(deps: EngineDeps) {
    this.#deps = deps;
    this.#inbox = this.#newInbox(0);
    this.#turns = this.#newTurns(0, this.#inbox);
  }

  /** The inbox of run `run`: closed once the engine stopped or started again (a later run has its own). */
  #newInbox(run: number): Inbox {
    return new Inbox({
      clock: this.#deps.clock,
      logger: this.#deps.logger,
      logs: this.#deps.logs,
      index: this.#deps.index,
      onQueued: (session) => this.#kick(session),
      closed: () => this.#state === 'stopped' || this.#run !== run,
    });
  }

  #newTurns(run: number, inbox: Inbox): TurnRunner {
    const deps = this.#deps;
    return new TurnRunner({
      config: deps.config,
      logger: deps.logger,
      logs: deps.logs,
      inbox,
      inference: deps.inference,
      outbox: deps.outbox,
      tools: deps.toolbox,
      running: () => this.#state === 'running' && this.#run === run,
      closed: () => this.#state === 'stopped' || this.#run !== run,
    });
  }

  // ---- lifecycle ------------------------------------------------------------------------------------------------

  /**
   * Restores every session from its log, queues again the messages accepted but never started, closes the turns a
   * crash cut off (per the seed), then starts the loops and the index flush. Resolves when the engine takes messages.
   */
  async start(): Promise<void> {
    if (this.#state !== 'new' && this.#state !== 'stopped')
      throw new Error(`engine cannot start: it is ${this.#state}`);
    if (this.#state === 'stopped') this.#renew();
    this.#state = 'starting';
    const { logs, index, logger, clock, config } = this.#deps;
    const { loaded, report } = await loadSessions(logs, index, logger);
    for (const { session } of loaded) this.#inbox.register(session);
    // First queue every pending message, so that what restore posts below lands after them, as in the logs.
    let pending = 0;
    for (const { session, state } of loaded) {
      for (const p of state.pending) {
        const { ts: _ts, ...message } = p;
        session.queue.push(message);
        pending += 1;
      }
    }
    const cut = loaded.filter((l) => l.state.openTurn);
    for (const { session, state } of cut) await this.#turns.closeCutOff(session, state);
    await this.#inbox.flushIndex();
    this.#flushTimer = clock.every(config.engine.indexFlushMs, () => void this.#inbox.flushIndex());
    this.#state = 'running';
    for (const session of this.#inbox.sessions.values()) if (session.queue.length > 0) this.#kick(session);
    logger.info({ ...report, sessions: this.#inbox.sessions.size, pending, cutOff: cut.length }, 'engine restored');
  }

  /**
   * A start after a stop (the `primary` lease taken again, e.g. after this node rejoined the cluster): everything is
   * restored again from the logs (rebuilt from the database on PostgreSQL), so the sessions, inbox and loops of the
   * run before are dropped; a turn of that run still ending sees its run closed and writes nothing more.
   */
  #renew(): void {
    this.#run += 1;
    for (const loop of this.#loops.values()) void loop.stop();
    this.#loops = new Map();
    this.#deps.logs.reopen();
    this.#inbox = this.#newInbox(this.#run);
    this.#turns = this.#newTurns(this.#run, this.#inbox);
  }

  /**
   * Stops taking turns: running turns get `engine.stopGraceMs` to finish, then their model calls are aborted and they
   * stay open (the next start closes them). Flushes the index and closes the logs. Messages still queued stay on disk.
   */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'stopping') return;
    const wasRunning = this.#state === 'running';
    this.#state = 'stopping';
    this.#flushTimer?.cancel();
    if (wasRunning) {
      const loops = Promise.all([...this.#loops.values()].map((loop) => loop.idle()));
      const grace = this.#deps.config.engine.stopGraceMs;
      if (grace > 0) {
        let timer: Timer | null = null;
        await Promise.race([loops, new Promise<void>((resolve) => (timer = this.#deps.clock.after(grace, resolve)))]);
        (timer as Timer | null)?.cancel();
      }
      for (const session of this.#inbox.sessions.values()) session.abort?.abort();
      await Promise.race([loops, new Promise((resolve) => setImmediate(resolve))]);
    }
    this.#state = 'stopped';
    await this.#inbox.flushIndex();
    for (const session of this.#inbox.sessions.values())
      session.waiter?.reject(new AppError('unavailable', 'the engine stopped'));
    await this.#deps.logs.closeAll();
  }

  /** Resolves once no session has a queued message or a running turn (tests and benchmarks). */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.#loops.values()].filter((loop) => loop.running);
      if (running.length === 0) return;
      await Promise.all(running.map((loop) => loop.idle()));
    }
  }

  // ---- EngineApi --------------------------------------------------------------------------------------------------

  async acceptUserMessage(message: InboundMessage): Promise<Accepted> {
    this.#assertOpen();
    check(inboundSchema, message);
    const channelId = formatTarget(message.target);
    if (!parseTarget(channelId)) throw invalidInput(`target: "${channelId}" is not a valid channel`, 'target');
    const session = this.#inbox.getOrCreate(userDescriptor(message));
    return this.#inbox.accept(session, {
      type: 'incoming',
      messageId: message.id,
      kind: 'user',
      origin: channelId,
      text: message.text,
      from: message.userId,
      replyTo: message.id,
    });
  }

  async postSystemMessage(
    route: MessageRoute,
    text: string,
    origin: string,
    options: PostOptions = {},
  ): Promise<Accepted | null> {
    this.#assertOpen();
    check(postSchema, { text, origin, messageId: options.messageId });
    const session = resolveRoute(this.#inbox.sessions, route);
    if (!session) return null;
    return this.#inbox.accept(session, systemEntry(text, origin, options.messageId));
  }

  async postScheduled(
    descriptor: { type: 'cron'; id: string } | { type: 'heartbeat' },
    text: string,
    origin: string,
    options: PostOptions = {},
  ): Promise<Accepted> {
    this.#assertOpen();
    const d = check(scheduledSchema, descriptor);
    check(postSchema, { text, origin, messageId: options.messageId });
    return this.#inbox.accept(this.#inbox.getOrCreate(d), systemEntry(text, origin, options.messageId));
  }

  async startBackgroundAgent(input: {
    prompt: string;
    name: string;
    parentSessionId?: string;
  }): Promise<{ sessionId: string }> {
    const { session, accepted } = this.#spawn(input, null);
    await accepted;
    return { sessionId: session.id };
  }

  async askAgent(input: {
    prompt: string;
    name: string;
    parentSessionId?: string;
    timeoutMs?: number;
  }): Promise<{ sessionId: string; text: string }> {
    const timeoutMs = input.timeoutMs ?? this.#deps.config.engine.askTimeoutMs;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw invalidInput('timeoutMs: must be a positive number of milliseconds', 'timeoutMs');
    let waiter: ReplyWaiter | null = null;
    const reply = new Promise<string>((resolve, reject) => (waiter = { resolve, reject }));
    const { session, accepted } = this.#spawn(input, waiter);
    await accepted;
    const timer = this.#deps.clock.after(timeoutMs, () => {
      if (session.waiter !== waiter) return;
      session.waiter = null;
      waiter?.reject(
        limitReached(
          `no reply from agent "${input.name}" (session ${session.id}) within ${timeoutMs} ms; its reply will go to its parent session`,
        ),
      );
    });
    try {
      return { sessionId: session.id, text: await reply };
    } finally {
      timer.cancel();
    }
  }

  listSessions(): EngineSessionSummary[] {
    return [...this.#inbox.sessions.values()]
      .map((s) => ({
        id: s.id,
        descriptor: s.descriptor,
        state: s.current ? ('running' as const) : ('idle' as const),
        queued: s.queue.length,
        createdAt: s.createdAt,
        updatedAt: s.updatedAt,
        lastUserAt: s.lastUserAt,
        lastOutcome: s.lastOutcome,
      }))
      .sort((a, b) => b.updatedAt - a.updatedAt);
  }

  /** The engine's sessions (see `listSessions`): this engine serves them itself. */
  async sessions(): Promise<EngineSessionSummary[]> {
    return this.listSessions();
  }

  // ---- the loop ---------------------------------------------------------------------------------------------------

  #assertOpen(): void {
    if (this.#state !== 'running' && this.#state !== 'starting')
      throw new AppError('unavailable', `the agent engine is ${this.#state === 'new' ? 'not started' : 'stopped'}`);
  }

  #kick(session: EngineSession): void {
    if (this.#state !== 'running') return;
    let loop = this.#loops.get(session.id);
    if (!loop) {
      // A failed turn is recorded by `fail`; only a failure to record it reaches the loop, which logs it and backs off.
      loop = new WorkLoop({
        clock: this.#deps.clock,
        step: () => this.#turn(session),
        retryDelay: (failures) => backoffDelay(failures, 1_000, 60_000),
        onError: (error, failures, retryInMs) =>
          this.#deps.logger.error(
            { session: session.id, failures, retryInMs, err: errorMessage(error) },
            'engine session loop failed; retrying',
          ),
      });
      this.#loops.set(session.id, loop);
    }
    loop.kick();
  }

  /** One turn of a session's loop: its oldest message, strictly in order, until its inbox is empty or the engine stops. */
  async #turn(session: EngineSession): Promise<StepResult> {
    if (this.#state !== 'running' || this.#inbox.sessions.get(session.id) !== session) return 'quiet';
    const message = session.queue.shift();
    if (!message) return 'quiet';
    session.current = message;
    try {
      await this.#turns.run(session, message);
    } catch (error) {
      if (isFenced(error)) {
        // This node lost the `primary` lease while it stalled: the new holder runs this message (and the ones behind it)
        // from the database and closes the turn; this stale run neither answers nor closes it, and takes no more.
        session.queue.unshift(message);
        return 'quiet';
      }
      await this.#turns.fail(session, message, error);
    } finally {
      session.current = null;
    }
    return 'more';
  }

  // ---- subagents and messages between sessions --------------------------------------------------------------------

  #defaultParent(): EngineSession {
    return (
      mostRecentForeground(this.#inbox.sessions.values()) ??
      heartbeatSession(this.#inbox.sessions.values()) ??
      this.#inbox.getOrCreate({ type: 'heartbeat' })
    );
  }

  #spawn(
    raw: { prompt: string; name: string; parentSessionId?: string },
    waiter: ReplyWaiter | null,
  ): { session: EngineSession; accepted: Promise<Accepted> } {
    this.#assertOpen();
    const input = check(agentInput, raw);
    const parent = input.parentSessionId ? this.#inbox.sessions.get(input.parentSessionId) : this.#defaultParent();
    if (!parent) throw notFound(`parentSessionId: no engine session ${input.parentSessionId}`);
    const id = newId(12);
    const session = this.#inbox.create({ type: 'subagent', id, parentSessionId: parent.id, name: input.name }, id);
    session.waiter = waiter;
    const accepted = this.#inbox.accept(session, systemEntry(input.prompt, `parent:${parent.id}`, `task-${id}`));
    return { session, accepted };
  }

  /**
   * Posts `text` from session `fromId` to `targetId`, or (when absent) to its parent (subagents) or the most recent
   * foreground session (others), with the sender's origin. Throws AppError when there is no such session.
   */
  async sendFromSession(fromId: string, text: string, targetId?: string): Promise<Accepted> {
    const from = this.#inbox.sessions.get(fromId);
    if (!from) throw notFound(`no engine session ${fromId}`);
    let target: EngineSession | null;
    if (targetId) {
      target = this.#inbox.sessions.get(targetId) ?? null;
      if (!target) throw notFound(`session_id: no engine session ${targetId}`);
    } else if (from.descriptor.type === 'subagent') {
      target = this.#inbox.sessions.get(from.descriptor.parentSessionId) ?? null;
      if (!target)
        throw notFound(`your parent session ${from.descriptor.parentSessionId} no longer exists; give session_id`);
    } else {
      target = mostRecentForeground(this.#inbox.sessions.values(), from.id);
      if (!target) throw notFound('there is no other user session to send to; give session_id');
    }
    if (target === from) throw invalidInput('session_id: a session cannot message itself', 'session_id');
    return this.#inbox.accept(target, systemEntry(text, originOf(from.descriptor, from.id)));
  }
}

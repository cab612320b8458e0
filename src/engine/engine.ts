// The agent engine: engine sessions (user, cron, heartbeat, subagent) with a durable inbox each, one loop per session
// (strictly in order, one message per turn; sessions run concurrently), routing between sessions, and restore after
// a restart. Every message is on disk before it is acknowledged; every turn writes turn_start before any work and
// turn_end after its reply is recorded and handed on.
import { z } from 'zod';
import type { InboundMessage, Outbox } from '../channels/connector.ts';
import { formatTarget, parseTarget } from '../channels/connector.ts';
import type { Clock, Timer } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { AppError, errorMessage, fromZodError, invalidInput, limitReached, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { Inference } from '../inference/types.ts';
import type { EngineIndex } from '../store/engine-index.ts';
import type { EngineLogs } from '../store/engine-logs.ts';
import { runAgentLoop, INTERNAL_ERROR } from './agent-loop.ts';
import type { AgentLoopResult } from './agent-loop.ts';
import type { Accepted, EngineControl, EngineSessionSummary, MessageRoute, SessionDescriptor } from './api.ts';
import { descriptorKey, originOf, userDescriptor } from './descriptor.ts';
import { engineToolbox } from './engine-tools.ts';
import { History, HistoryCollector, renderIncoming } from './history.ts';
import type { TurnLog, TurnStep } from './history.ts';
import { asEngineRecord } from './log-records.ts';
import type { EngineLogEntry, IncomingEntry } from './log-records.ts';
import { systemPromptFor } from './prompts.ts';
import { loadSessions } from './restore.ts';
import type { RestoreState } from './restore-scan.ts';
import { heartbeatSession, mostRecentForeground, resolveRoute, servedChannel } from './routing.ts';
import { EngineSession } from './session.ts';
import type { QueuedMessage, ReplyWaiter } from './session.ts';
import { mergeToolboxes } from './toolbox.ts';
import type { AgentToolbox, EngineSessionInfo } from './toolbox.ts';

export interface EngineDeps {
  /** Reads `engine.*`. */
  config: Config;
  clock: Clock;
  logger: Logger;
  logs: EngineLogs;
  index: EngineIndex;
  inference: Inference;
  outbox: Outbox;
  /** Tools beyond the engine's own (operations/toolbox.ts); the engine's start_background_agent and send_session_message are merged in. */
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
const agentInput = z.object({ prompt: nonEmpty('prompt'), name: nonEmpty('name').max(64), parentSessionId: z.string().min(1).optional() });

function check<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZodError(result.error);
  return result.data;
}

/** The EngineApi implementation; build it with createEngine, then start() it. */
export class Engine implements EngineControl {
  #deps: EngineDeps;
  #sessions = new Map<string, EngineSession>();
  #byKey = new Map<string, EngineSession>();
  #loops = new Map<string, Promise<void>>();
  #tools: AgentToolbox;
  #state: EngineState = 'new';
  #flushTimer: Timer | null = null;
  #idleWaiters: (() => void)[] = [];

  constructor(deps: EngineDeps) {
    this.#deps = deps;
    const own = engineToolbox({
      startBackgroundAgent: (input) => this.startBackgroundAgent(input),
      sendFromSession: (fromId, text, targetId) => this.#sendFromSession(fromId, text, targetId),
    });
    this.#tools = mergeToolboxes(own, deps.toolbox);
  }

  // ---- lifecycle ------------------------------------------------------------------------------------------------

  /**
   * Restores every session from its log, queues again the messages accepted but never started, closes the turns a
   * crash cut off (per the seed), then starts the loops and the index flush. Resolves when the engine takes messages.
   */
  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`engine cannot start: it is ${this.#state}`);
    this.#state = 'starting';
    const { logs, index, logger, clock, config } = this.#deps;
    const { loaded, report } = loadSessions(logs, index, logger);
    for (const { session } of loaded) this.#register(session);
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
    for (const { session, state } of cut) await this.#closeCutOffTurn(session, state);
    this.#flushIndex();
    this.#flushTimer = clock.every(config.engine.indexFlushMs, () => this.#flushIndex());
    this.#state = 'running';
    for (const session of this.#sessions.values()) if (session.queue.length > 0) this.#kick(session);
    logger.info({ ...report, sessions: this.#sessions.size, pending, cutOff: cut.length }, 'engine restored');
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
      const loops = Promise.all(this.#loops.values());
      const grace = this.#deps.config.engine.stopGraceMs;
      if (grace > 0) {
        let timer: Timer | null = null;
        await Promise.race([loops, new Promise<void>((resolve) => (timer = this.#deps.clock.after(grace, resolve)))]);
        (timer as Timer | null)?.cancel();
      }
      for (const session of this.#sessions.values()) session.abort?.abort();
      await Promise.race([loops, new Promise((resolve) => setImmediate(resolve))]);
    }
    this.#state = 'stopped';
    this.#flushIndex();
    for (const session of this.#sessions.values()) session.waiter?.reject(new AppError('unavailable', 'the engine stopped'));
    await this.#deps.logs.closeAll();
  }

  /** Resolves once no session has a queued message or a running turn (tests and benchmarks). */
  settled(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  // ---- EngineApi --------------------------------------------------------------------------------------------------

  async acceptUserMessage(message: InboundMessage): Promise<Accepted> {
    this.#assertOpen();
    check(inboundSchema, message);
    const channelId = formatTarget(message.target);
    if (!parseTarget(channelId)) throw invalidInput(`target: "${channelId}" is not a valid channel`, 'target');
    const session = this.#getOrCreate(userDescriptor(message));
    return this.#accept(session, {
      type: 'incoming',
      messageId: message.id,
      kind: 'user',
      origin: channelId,
      text: message.text,
      from: message.userId,
      replyTo: message.id,
    });
  }

  async postSystemMessage(route: MessageRoute, text: string, origin: string): Promise<Accepted | null> {
    this.#assertOpen();
    check(z.object({ text: nonEmpty('text'), origin: nonEmpty('origin') }), { text, origin });
    const session = resolveRoute(this.#sessions, route);
    if (!session) return null;
    return this.#accept(session, this.#systemEntry(text, origin));
  }

  async postScheduled(descriptor: { type: 'cron'; id: string } | { type: 'heartbeat' }, text: string, origin: string): Promise<Accepted> {
    this.#assertOpen();
    const d = check(scheduledSchema, descriptor);
    check(z.object({ text: nonEmpty('text'), origin: nonEmpty('origin') }), { text, origin });
    return this.#accept(this.#getOrCreate(d), this.#systemEntry(text, origin));
  }

  async startBackgroundAgent(input: { prompt: string; name: string; parentSessionId?: string }): Promise<{ sessionId: string }> {
    const { session, accepted } = this.#spawn(input, null);
    await accepted;
    return { sessionId: session.id };
  }

  async askAgent(input: { prompt: string; name: string; parentSessionId?: string; timeoutMs?: number }): Promise<{ sessionId: string; text: string }> {
    const timeoutMs = input.timeoutMs ?? this.#deps.config.engine.askTimeoutMs;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw invalidInput('timeoutMs: must be a positive number of milliseconds', 'timeoutMs');
    let waiter: ReplyWaiter | null = null;
    const reply = new Promise<string>((resolve, reject) => (waiter = { resolve, reject }));
    const { session, accepted } = this.#spawn(input, waiter);
    await accepted;
    const timer = this.#deps.clock.after(timeoutMs, () => {
      if (session.waiter !== waiter) return;
      session.waiter = null;
      waiter?.reject(limitReached(`no reply from agent "${input.name}" (session ${session.id}) within ${timeoutMs} ms; its reply will go to its parent session`));
    });
    try {
      return { sessionId: session.id, text: await reply };
    } finally {
      timer.cancel();
    }
  }

  listSessions(): EngineSessionSummary[] {
    return [...this.#sessions.values()]
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

  // ---- sessions and the inbox -------------------------------------------------------------------------------------

  /** Read through a method so that narrowing across awaits does not hide a stop. */
  #isStopped(): boolean {
    return this.#state === 'stopped';
  }

  #assertOpen(): void {
    if (this.#state !== 'running' && this.#state !== 'starting') throw new AppError('unavailable', `the agent engine is ${this.#state === 'new' ? 'not started' : 'stopped'}`);
  }

  #register(session: EngineSession): void {
    this.#sessions.set(session.id, session);
    this.#byKey.set(session.key, session);
  }

  /** Creates a session: its log starts with `session_created{descriptor}` (on disk with the first message's sync). */
  #create(descriptor: SessionDescriptor, id: string = newId(12)): EngineSession {
    const session = new EngineSession({ id, descriptor, createdAt: this.#deps.clock.now() });
    const record = this.#deps.logs.write(id, { type: 'session_created', descriptor });
    session.updatedAt = record.ts;
    this.#register(session);
    return session;
  }

  #getOrCreate(descriptor: SessionDescriptor): EngineSession {
    return this.#byKey.get(descriptorKey(descriptor)) ?? this.#create(descriptor);
  }

  #systemEntry(text: string, origin: string, messageId = `sys-${newId(16)}`): IncomingEntry {
    return { type: 'incoming', messageId, kind: 'system', origin, text };
  }

  async #sync(session: EngineSession): Promise<void> {
    const seq = this.#deps.logs.lastSeq(session.id);
    await this.#deps.logs.sync(session.id);
    session.markDurable(seq);
  }

  #write(session: EngineSession, entry: EngineLogEntry): number {
    const record = this.#deps.logs.write(session.id, entry);
    session.updatedAt = record.ts;
    return record.seq;
  }

  /**
   * Puts a message into a session's inbox: written to its log and fdatasync'd before this resolves. A message id the
   * session already accepted is acknowledged as a duplicate (once the original is on disk) and not queued again.
   */
  async #accept(session: EngineSession, entry: IncomingEntry): Promise<Accepted> {
    const base = { sessionId: session.id, messageId: entry.messageId };
    if (session.recentIds.has(entry.messageId) || this.#deps.index.hasMessage(session.id, entry.messageId)) {
      await this.#sync(session);
      return { ...base, duplicate: true };
    }
    const seq = this.#write(session, entry);
    session.recentIds.add(entry.messageId);
    session.inflight.add(seq);
    if (entry.kind === 'user') session.lastUserAt = session.updatedAt;
    session.queue.push({ ...entry, seq });
    this.#kick(session);
    try {
      await this.#sync(session);
    } finally {
      session.inflight.delete(seq);
    }
    session.unindexed.push({ messageId: entry.messageId, seq });
    return { ...base, duplicate: false };
  }

  /** Writes the index rows of changed sessions and the message ids now on disk, in one transaction. */
  #flushIndex(): void {
    const rows = [];
    const messages = [];
    const taken = new Map<EngineSession, number>();
    for (const s of this.#sessions.values()) {
      if (!s.dirty && s.unindexed.length === 0) continue;
      const floor = s.inflight.size > 0 ? Math.min(...s.inflight) - 1 : Infinity;
      const indexedSeq = Math.min(s.durableSeq, floor);
      rows.push({ id: s.id, key: s.key, type: s.descriptor.type, createdAt: s.createdAt, updatedAt: s.updatedAt, lastUserAt: s.lastUserAt, indexedSeq });
      for (const m of s.unindexed) messages.push({ sessionId: s.id, messageId: m.messageId, seq: m.seq });
      taken.set(s, s.unindexed.length);
    }
    if (rows.length === 0) return;
    try {
      this.#deps.index.apply(rows, messages);
    } catch (error) {
      this.#deps.logger.error({ err: errorMessage(error) }, 'engine index flush failed; retrying at the next flush');
      return;
    }
    for (const [s, count] of taken) {
      for (const m of s.unindexed.slice(0, count)) s.recentIds.delete(m.messageId);
      s.unindexed = s.unindexed.slice(count);
      s.dirty = false;
    }
  }

  // ---- the loop ---------------------------------------------------------------------------------------------------

  #kick(session: EngineSession): void {
    if (this.#state !== 'running' || session.looping) return;
    session.looping = true;
    const loop = this.#drain(session).finally(() => {
      session.looping = false;
      this.#loops.delete(session.id);
      if (this.#idle()) for (const resolve of this.#idleWaiters.splice(0)) resolve();
    });
    this.#loops.set(session.id, loop);
  }

  #idle(): boolean {
    for (const s of this.#sessions.values()) if (s.looping || (this.#state === 'running' && s.queue.length > 0)) return false;
    return true;
  }

  async #drain(session: EngineSession): Promise<void> {
    while (this.#state === 'running') {
      const message = session.queue.shift();
      if (!message) return;
      session.current = message;
      try {
        await this.#runTurn(session, message);
      } catch (error) {
        await this.#failTurn(session, message, error);
      } finally {
        session.current = null;
      }
    }
  }

  #info(session: EngineSession): EngineSessionInfo {
    const channel = servedChannel(this.#sessions, session);
    return { id: session.id, descriptor: session.descriptor, ...(channel ? { channel } : {}) };
  }

  #history(session: EngineSession): History {
    if (session.history) return session.history;
    const { historyTurns, historyMaxChars } = this.#deps.config.engine;
    const collector = new HistoryCollector(historyTurns);
    if (historyTurns > 0) {
      this.#deps.logs.scanBackward(session.id, (raw) => {
        const record = asEngineRecord(raw);
        return record ? collector.visit(record) : true;
      });
    }
    session.history = new History({ turns: historyTurns, maxChars: historyMaxChars }, collector.result());
    return session.history;
  }

  async #runTurn(session: EngineSession, message: QueuedMessage): Promise<void> {
    const { config, inference, logger } = this.#deps;
    await this.#sync(session);
    if (this.#state !== 'running') {
      session.queue.unshift(message);
      return;
    }
    const history = this.#history(session);
    this.#write(session, { type: 'turn_start', messageId: message.messageId });
    await this.#sync(session);
    const { seq: _seq, ...incoming } = message;
    const turn: TurnLog = { messageId: message.messageId, incoming, steps: [], outcome: null };
    const info = this.#info(session);
    const abort = new AbortController();
    session.abort = abort;
    const isUser = session.descriptor.type === 'user';
    let result: AgentLoopResult;
    try {
      result = await runAgentLoop({
        sessionId: session.id,
        system: systemPromptFor(session.descriptor, config.engine.systemPrompt),
        messages: [...history.messages(), { role: 'user', content: renderIncoming(incoming) }],
        tools: this.#tools.tools(info),
        maxIterations: config.engine.maxToolIterations,
        signal: abort.signal,
        inference,
        runTool: (call) => this.#tools.run(call, info),
        record: (step) => this.#step(session, turn, step),
        onText: (text) => (isUser ? this.#reply(session, message, turn, text) : undefined),
      });
    } finally {
      session.abort = null;
    }
    if (result.outcome === 'abandoned' || this.#isStopped()) return;
    if (result.failure) logger.warn({ session: session.id, type: session.descriptor.type, error: result.error }, `engine turn ended: ${result.failure}`);
    if (isUser && result.failure) this.#reply(session, message, turn, result.failure);
    if (session.descriptor.type === 'subagent') await this.#report(session, message, turn, result);
    this.#write(session, {
      type: 'turn_end',
      messageId: message.messageId,
      outcome: result.outcome,
      ...(result.error ? { error: result.failure ? `${result.failure} ${result.error}` : result.error } : {}),
    });
    await this.#sync(session);
    turn.outcome = result.outcome;
    history.add(turn);
    session.lastOutcome = result.outcome;
    session.turnsRun += 1;
  }

  #step(session: EngineSession, turn: TurnLog, step: TurnStep): void {
    this.#write(session, step);
    turn.steps.push(step);
  }

  /** A user session's reply: recorded, then handed to the Outbox for the session's channel. */
  #reply(session: EngineSession, message: Pick<IncomingEntry, 'kind' | 'replyTo'>, turn: TurnLog | null, text: string): void {
    if (session.descriptor.type !== 'user') return;
    const channelId = session.descriptor.channelId;
    const target = parseTarget(channelId);
    const step: TurnStep = { type: 'outgoing', text, target: channelId };
    this.#write(session, step);
    turn?.steps.push(step);
    if (!target) {
      this.#deps.logger.error({ session: session.id, channel: channelId }, 'engine reply has no valid target; recorded only');
      return;
    }
    this.#deps.outbox.send(target, { text, ...(message.kind === 'user' && message.replyTo ? { replyTo: message.replyTo } : {}) });
  }

  /**
   * A subagent's turn result: to askAgent's waiter (first reply), else to its parent as a system message from
   * `subagent:<name>`. Failures always go to the parent. The delivery id is derived from the turn, so delivering
   * again (restore) never queues it twice.
   */
  async #report(session: EngineSession, message: QueuedMessage, turn: TurnLog, result: Exclude<AgentLoopResult, { outcome: 'abandoned' }>): Promise<void> {
    if (session.descriptor.type !== 'subagent') return;
    const { name } = session.descriptor;
    const failed = result.failure !== undefined;
    const waiter = session.waiter;
    session.waiter = null;
    if (failed) {
      const text = `Background agent "${name}" (session ${session.id}) failed: ${result.failure}`;
      waiter?.reject(new AppError('unavailable', text));
      await this.#deliverToParent(session, turn, message.messageId, text);
      return;
    }
    let text = result.lastText ?? `Background agent "${name}" finished without a reply.`;
    if (result.outcome === 'limit') text += '\n(Stopped: tool execution limit reached.)';
    if (waiter) {
      this.#step(session, turn, { type: 'outgoing', text, target: 'ask' });
      waiter.resolve(text);
      return;
    }
    await this.#deliverToParent(session, turn, message.messageId, text);
  }

  async #deliverToParent(session: EngineSession, turn: TurnLog | null, messageId: string, text: string, suffix = ''): Promise<void> {
    if (session.descriptor.type !== 'subagent') return;
    const parentId = session.descriptor.parentSessionId;
    const step: TurnStep = { type: 'outgoing', text, target: `session:${parentId}` };
    this.#write(session, step);
    turn?.steps.push(step);
    const parent = this.#sessions.get(parentId);
    if (!parent) {
      this.#deps.logger.error({ session: session.id, parent: parentId }, 'subagent result recorded but its parent session does not exist');
      return;
    }
    await this.#accept(parent, this.#systemEntry(text, originOf(session.descriptor, session.id), `sub-${session.id}-${messageId}${suffix}`));
  }

  /** An engine fault during a turn (e.g. a failed write): closes the turn as internal_error and says so. */
  async #failTurn(session: EngineSession, message: QueuedMessage, error: unknown): Promise<void> {
    const { logger } = this.#deps;
    logger.error({ session: session.id, message: message.messageId, err: errorMessage(error) }, 'engine turn failed');
    if (this.#state === 'stopped') return;
    try {
      if (session.descriptor.type === 'user') this.#reply(session, message, null, INTERNAL_ERROR);
      if (session.descriptor.type === 'subagent') {
        const text = `Background agent "${session.descriptor.name}" (session ${session.id}) failed: ${INTERNAL_ERROR}`;
        session.waiter?.reject(new AppError('internal', text));
        session.waiter = null;
        await this.#deliverToParent(session, null, message.messageId, text, '-failed');
      }
      this.#write(session, { type: 'turn_end', messageId: message.messageId, outcome: 'internal_error', error: errorMessage(error) });
      await this.#sync(session);
      session.lastOutcome = 'internal_error';
      session.history = null;
    } catch (second) {
      logger.error({ session: session.id, err: errorMessage(second) }, 'could not close the failed engine turn; the next start closes it');
    }
  }

  // ---- restore ----------------------------------------------------------------------------------------------------

  /**
   * Closes a turn a crash cut off (turn_start without turn_end); its message is never run again. User: "Internal
   * error." to the same channel. Cron, heartbeat: closed silently (the scheduler runs them at the next cadence).
   * Subagent: its parent is told it failed while offline — or, when the turn had already recorded its result for the
   * parent, that result is delivered (idempotently).
   */
  async #closeCutOffTurn(session: EngineSession, state: RestoreState): Promise<void> {
    const open = state.openTurn;
    if (!open) return;
    const d = session.descriptor;
    const { logger } = this.#deps;
    logger.warn({ session: session.id, type: d.type, message: open.messageId }, 'engine turn cut off by a restart; closing it');
    if (d.type === 'user') {
      const incoming = open.incoming ?? { kind: 'system' as const };
      this.#reply(session, incoming, null, INTERNAL_ERROR);
    } else if (d.type === 'subagent') {
      const recorded = [...open.steps]
        .reverse()
        .find((s): s is Extract<TurnStep, { type: 'outgoing' }> => s.type === 'outgoing' && s.target === `session:${d.parentSessionId}`);
      const parent = this.#sessions.get(d.parentSessionId);
      if (recorded && parent) {
        await this.#accept(parent, this.#systemEntry(recorded.text, originOf(d, session.id), `sub-${session.id}-${open.messageId}`));
      } else {
        const text = `Background agent "${d.name}" (session ${session.id}) failed while offline: its turn was cut off by a daemon restart.`;
        await this.#deliverToParent(session, null, open.messageId, text, '-offline');
      }
    }
    this.#write(session, { type: 'turn_end', messageId: open.messageId, outcome: 'internal_error', error: 'cut off by a daemon restart' });
    await this.#sync(session);
    session.lastOutcome = 'internal_error';
  }

  // ---- subagents and messages between sessions --------------------------------------------------------------------

  #defaultParent(): EngineSession {
    return mostRecentForeground(this.#sessions.values()) ?? heartbeatSession(this.#sessions.values()) ?? this.#getOrCreate({ type: 'heartbeat' });
  }

  #spawn(raw: { prompt: string; name: string; parentSessionId?: string }, waiter: ReplyWaiter | null): { session: EngineSession; accepted: Promise<Accepted> } {
    this.#assertOpen();
    const input = check(agentInput, raw);
    const parent = input.parentSessionId ? this.#sessions.get(input.parentSessionId) : this.#defaultParent();
    if (!parent) throw notFound(`parentSessionId: no engine session ${input.parentSessionId}`);
    const id = newId(12);
    const session = this.#create({ type: 'subagent', id, parentSessionId: parent.id, name: input.name }, id);
    session.waiter = waiter;
    const accepted = this.#accept(session, this.#systemEntry(input.prompt, `parent:${parent.id}`, `task-${id}`));
    return { session, accepted };
  }

  async #sendFromSession(fromId: string, text: string, targetId?: string): Promise<{ sessionId: string }> {
    const from = this.#sessions.get(fromId);
    if (!from) throw notFound(`no engine session ${fromId}`);
    let target: EngineSession | null;
    if (targetId) {
      target = this.#sessions.get(targetId) ?? null;
      if (!target) throw notFound(`session_id: no engine session ${targetId}`);
    } else if (from.descriptor.type === 'subagent') {
      target = this.#sessions.get(from.descriptor.parentSessionId) ?? null;
      if (!target) throw notFound(`your parent session ${from.descriptor.parentSessionId} no longer exists; give session_id`);
    } else {
      target = mostRecentForeground(this.#sessions.values(), from.id);
      if (!target) throw notFound('there is no other user session to send to; give session_id');
    }
    if (target === from) throw invalidInput('session_id: a session cannot message itself', 'session_id');
    await this.#accept(target, this.#systemEntry(text, originOf(from.descriptor, from.id)));
    return { sessionId: target.id };
  }
}

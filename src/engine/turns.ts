// One turn of one engine session, and the closing of turns that did not end normally. A turn writes turn_start
// before any work, runs the agent loop, hands its reply on (user: Outbox; subagent: askAgent's waiter or the parent's
// inbox), and writes turn_end last. The seed's texts: "Inference failed.", "No inference provider available.",
// "Tool execution limit reached.", "Internal error.".
import type { Outbox } from '../channels/connector.ts';
import { parseTarget } from '../channels/connector.ts';
import type { Config } from '../core/config.ts';
import { AppError, errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { Inference } from '../inference/types.ts';
import type { EngineLogs } from '../store/engine-logs.ts';
import type { AgentLoopResult } from './agent-loop.ts';
import { INTERNAL_ERROR, runAgentLoop } from './agent-loop.ts';
import { cutOffAnswer } from './cut-off-answer.ts';
import { originOf } from './descriptor.ts';
import type { TurnLog, TurnStep } from './history.ts';
import { History, HistoryCollector, renderIncoming } from './history.ts';
import type { Inbox } from './inbox.ts';
import { systemEntry } from './inbox.ts';
import type { IncomingEntry } from './log-records.ts';
import { asEngineRecord } from './log-records.ts';
import { systemPromptFor } from './prompts.ts';
import type { RestoreState } from './restore-scan.ts';
import { servedChannel } from './routing.ts';
import type { EngineSession, QueuedMessage } from './session.ts';
import type { AgentToolbox, EngineSessionInfo } from './toolbox.ts';

export interface TurnDeps {
  config: Config;
  logger: Logger;
  logs: EngineLogs;
  inbox: Inbox;
  inference: Inference;
  outbox: Outbox;
  /** The sessions' tools (the operations table's, injected). */
  tools: AgentToolbox;
  /** True while the engine starts new turns (false from the moment it begins to stop). */
  running(): boolean;
  /** True once the engine has stopped (its logs are closed): a turn still going then stays open. */
  closed(): boolean;
}

type Finished = Exclude<AgentLoopResult, { outcome: 'abandoned' }>;

/** Runs and closes turns. */
export class TurnRunner {
  #deps: TurnDeps;

  constructor(deps: TurnDeps) {
    this.#deps = deps;
  }

  /** What the toolbox is told about a session. */
  info(session: EngineSession): EngineSessionInfo {
    const channel = servedChannel(this.#deps.inbox.sessions, session);
    return { id: session.id, descriptor: session.descriptor, ...(channel ? { channel } : {}) };
  }

  /** The session's bounded history, read from the end of its log on first use and kept up to date after. */
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

  /**
   * Runs the turn of `message`. When the engine stops first, the message goes back to the head of the queue (it never
   * started); when it stops mid-turn, the turn stays open for the next start to close. Throws only on engine faults.
   */
  async run(session: EngineSession, message: QueuedMessage): Promise<void> {
    const { config, inference, logger, inbox } = this.#deps;
    await inbox.sync(session);
    if (!this.#deps.running()) {
      session.queue.unshift(message);
      return;
    }
    const history = this.#history(session);
    inbox.write(session, { type: 'turn_start', messageId: message.messageId });
    await inbox.sync(session);
    const { seq: _seq, ...incoming } = message;
    const turn: TurnLog = { messageId: message.messageId, incoming, steps: [], outcome: null };
    const info = this.info(session);
    const isUser = session.descriptor.type === 'user';
    const abort = new AbortController();
    session.abort = abort;
    let result: AgentLoopResult;
    try {
      result = await runAgentLoop({
        sessionId: session.id,
        system: systemPromptFor(session.descriptor, config.engine.systemPrompt),
        messages: [...history.messages(), { role: 'user', content: renderIncoming(incoming) }],
        tools: this.#deps.tools.tools(info),
        maxIterations: config.engine.maxToolIterations,
        signal: abort.signal,
        inference,
        runTool: (call) => this.#deps.tools.run(call, info, abort.signal),
        record: (step) => this.#step(session, turn, step),
        onText: (text) => (isUser ? this.#reply(session, message, turn, text) : undefined),
      });
    } finally {
      session.abort = null;
    }
    if (result.outcome === 'abandoned' || this.#deps.closed()) return;
    if (result.failure)
      logger.warn(
        { session: session.id, type: session.descriptor.type, error: result.error },
        `engine turn ended: ${result.failure}`,
      );
    if (isUser && result.failure) await this.#reply(session, message, turn, result.failure);
    if (session.descriptor.type === 'subagent') await this.#report(session, message, turn, result);
    const error = result.error ? (result.failure ? `${result.failure} ${result.error}` : result.error) : undefined;
    faultPoint('engine.turn.before-end');
    inbox.write(session, {
      type: 'turn_end',
      messageId: message.messageId,
      outcome: result.outcome,
      ...(error ? { error } : {}),
    });
    await inbox.sync(session);
    turn.outcome = result.outcome;
    history.add(turn);
    session.lastOutcome = result.outcome;
  }

  #step(session: EngineSession, turn: TurnLog | null, step: TurnStep): number {
    const seq = this.#deps.inbox.write(session, step);
    turn?.steps.push(step);
    return seq;
  }

  /**
   * A user session's reply: recorded, then handed to the Outbox for the session's channel under a key made of the
   * record's seq, so restore can hand a recorded reply over again without it being queued twice. Resolves once the
   * Outbox has recorded it.
   */
  async #reply(
    session: EngineSession,
    message: Pick<IncomingEntry, 'kind' | 'replyTo'>,
    turn: TurnLog | null,
    text: string,
  ): Promise<void> {
    if (session.descriptor.type !== 'user') return;
    const seq = this.#step(session, turn, { type: 'outgoing', text, target: session.descriptor.channelId });
    faultPoint('engine.reply.after-record');
    await this.#send(session, message, text, seq);
  }

  /** Hands a recorded reply (its `outgoing` record has `seq`) to the Outbox; a repeat with the same seq is a no-op. */
  async #send(
    session: EngineSession,
    message: Pick<IncomingEntry, 'kind' | 'replyTo'>,
    text: string,
    seq: number,
  ): Promise<void> {
    if (session.descriptor.type !== 'user') return;
    const channelId = session.descriptor.channelId;
    const target = parseTarget(channelId);
    if (!target) {
      this.#deps.logger.error(
        { session: session.id, channel: channelId },
        'engine reply has no valid target; recorded only',
      );
      return;
    }
    const replyTo = message.kind === 'user' && message.replyTo ? { replyTo: message.replyTo } : {};
    await this.#deps.outbox.send(target, { text, ...replyTo }, { key: `engine-${session.id}-${seq}`, fenced: true });
  }

  /**
   * A subagent's turn result: to askAgent's waiter (first reply), else to its parent as a system message from
   * `subagent:<name>`. Failures always go to the parent.
   */
  async #report(session: EngineSession, message: QueuedMessage, turn: TurnLog, result: Finished): Promise<void> {
    if (session.descriptor.type !== 'subagent') return;
    const { name } = session.descriptor;
    const waiter = session.waiter;
    session.waiter = null;
    if (result.failure !== undefined) {
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

  /**
   * Records `text` as sent to the parent, then puts it in the parent's inbox. Its message id derives from the turn,
   * so delivering it again (on restore) never queues it twice.
   */
  async #deliverToParent(
    session: EngineSession,
    turn: TurnLog | null,
    messageId: string,
    text: string,
    suffix = '',
  ): Promise<void> {
    if (session.descriptor.type !== 'subagent') return;
    const parentId = session.descriptor.parentSessionId;
    this.#step(session, turn, { type: 'outgoing', text, target: `session:${parentId}` });
    const parent = this.#deps.inbox.sessions.get(parentId);
    if (!parent) {
      this.#deps.logger.error(
        { session: session.id, parent: parentId },
        'subagent result recorded but its parent session does not exist',
      );
      return;
    }
    await this.#deps.inbox.accept(
      parent,
      systemEntry(text, originOf(session.descriptor, session.id), `sub-${session.id}-${messageId}${suffix}`),
    );
  }

  /** An engine fault during a turn (e.g. a failed write): closes the turn as internal_error and says so. */
  async fail(session: EngineSession, message: QueuedMessage, error: unknown): Promise<void> {
    const { logger, inbox } = this.#deps;
    logger.error({ session: session.id, message: message.messageId, err: errorMessage(error) }, 'engine turn failed');
    if (this.#deps.closed()) return;
    try {
      if (session.descriptor.type === 'user') await this.#reply(session, message, null, INTERNAL_ERROR);
      if (session.descriptor.type === 'subagent') {
        const text = `Background agent "${session.descriptor.name}" (session ${session.id}) failed: ${INTERNAL_ERROR}`;
        session.waiter?.reject(new AppError('internal', text));
        session.waiter = null;
        await this.#deliverToParent(session, null, message.messageId, text, '-failed');
      }
      inbox.write(session, {
        type: 'turn_end',
        messageId: message.messageId,
        outcome: 'internal_error',
        error: errorMessage(error),
      });
      await inbox.sync(session);
      session.lastOutcome = 'internal_error';
      session.history = null;
    } catch (second) {
      logger.error(
        { session: session.id, err: errorMessage(second) },
        'could not close the failed engine turn; the next start closes it',
      );
    }
  }

  /**
   * Closes a turn a crash cut off (turn_start without turn_end); its message is never run again. User: the replies it
   * recorded are handed to the Outbox again (keyed: never queued twice); then, unless it recorded a terminal answer,
   * its recorded final answer, else "Internal error.", to the same channel, replying to the message (cut-off-answer.ts).
   * Cron, heartbeat: closed silently (the scheduler runs them at
   * the next cadence). Subagent: its parent is told it failed while offline — or, when the turn had already recorded
   * its result for the parent, that result is delivered (idempotently).
   */
  async closeCutOff(session: EngineSession, state: RestoreState): Promise<void> {
    const open = state.openTurn;
    if (!open) return;
    const d = session.descriptor;
    const { logger, inbox } = this.#deps;
    logger.warn(
      { session: session.id, type: d.type, message: open.messageId },
      'engine turn cut off by a restart; closing it',
    );
    if (d.type === 'user') {
      const message = open.incoming ?? { kind: 'system' as const };
      for (const sent of open.sent)
        if (sent.target === d.channelId) await this.#send(session, message, sent.text, sent.seq);
      const answer = cutOffAnswer(open.steps);
      switch (answer.kind) {
        case 'answered':
        case 'silent':
          break;
        case 'unsent':
          logger.info(
            { session: session.id, message: open.messageId },
            'cut-off turn had recorded its answer; delivering it',
          );
          await this.#reply(session, message, null, answer.text);
          break;
        case 'none':
          await this.#reply(session, message, null, INTERNAL_ERROR);
          break;
        default:
          answer satisfies never;
      }
    } else if (d.type === 'subagent') {
      const recorded = [...open.steps]
        .reverse()
        .find(
          (s): s is Extract<TurnStep, { type: 'outgoing' }> =>
            s.type === 'outgoing' && s.target === `session:${d.parentSessionId}`,
        );
      const parent = inbox.sessions.get(d.parentSessionId);
      if (recorded && parent) {
        await inbox.accept(
          parent,
          systemEntry(recorded.text, originOf(d, session.id), `sub-${session.id}-${open.messageId}`),
        );
      } else {
        const text = `Background agent "${d.name}" (session ${session.id}) failed while offline: its turn was cut off by a daemon restart.`;
        await this.#deliverToParent(session, null, open.messageId, text, '-offline');
      }
    }
    faultPoint('engine.cut-off.before-end');
    inbox.write(session, {
      type: 'turn_end',
      messageId: open.messageId,
      outcome: 'internal_error',
      error: 'cut off by a daemon restart',
    });
    await inbox.sync(session);
    session.lastOutcome = 'internal_error';
  }
}

import type { ChannelTarget, Outbox } from '../channels/connector.ts';
import { formatTarget, parseTarget } from '../channels/connector.ts';
import type { Session, SessionSignal } from '../coding/session.ts';
import type { SessionManager } from '../coding/session-manager.ts';
import { toolUseLine } from '../coding/tool-summary.ts';
import type { Clock, Timer } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { StoredSession } from '../store/coding-session-types.ts';
import type { TextBatch } from './foreground-stream.ts';
import { ForegroundStream } from './foreground-stream.ts';
import { LongRunReminders } from './long-run-reminders.ts';
import type { WaitingInfo } from './messages.ts';
import {
  budgetText,
  foregroundEndedText,
  foregroundWaitingText,
  interruptedText,
  launchedText,
  originEndedText,
  originWaitingText,
  reminderText,
  respondedText,
} from './messages.ts';
import type { Audience } from './recipients.ts';
import { recipients, streamingChannels } from './recipients.ts';
import { sessionThreadKey } from './session-thread.ts';

export interface NotificationRouterDeps {
  sessions: SessionManager;
  outbox: Outbox;
  clock: Clock;
  /** Uses timings.fgDebounceMs, safetyNetMs, longRunReminderMs and reminderCheckIntervalMs. */
  config: Pick<Config, 'timings'>;
  logger: Logger;
  /**
   * Whether a channel's connector opens threads (Slack, Discord): a session's launch line then opens its thread in the
   * origin chat even when that chat typed the launch command. Default: no channel does.
   */
  threads?: (channel: string) => boolean;
}

/** Tells chat channels what coding sessions say, ask and do. */
export interface NotificationRouter {
  /** Subscribes to the SessionManager and starts the long-run reminder check. Idempotent. */
  start(): void;
  /** Unsubscribes, stops the reminder check and sends every pending debounced text. Idempotent. */
  stop(): void;
  /**
   * Tells the origin (and streaming channels) of each session that a daemon restart interrupted it and that it can
   * be resumed. Call once at startup with what `SessionManager.restore()` returned; unknown ids are skipped. Resolves
   * once the messages are recorded in the Outbox (a failure is logged, not thrown).
   */
  announceInterrupted(sessionIds: readonly string[]): Promise<void>;
}

/** Builds the NotificationRouter over its dependencies (see NotificationRouterDeps); call start() to begin. */
export function createNotificationRouter(deps: NotificationRouterDeps): NotificationRouter {
  return new SessionNotifier(deps);
}

/** How many of a turn's last output blocks a preview is made of (seed: 5). */
const PREVIEW_BLOCKS = 5;

/** Per-session facts gathered from earlier signals of the current turn. */
interface TurnState {
  /** Log seq before the turn's first output: the run's start, or the last message sent into the session. */
  startSeq?: number;
  question?: string;
  permission?: { tool: string; input: unknown };
}

class SessionNotifier implements NotificationRouter {
  #deps: NotificationRouterDeps;
  #stream: ForegroundStream;
  #reminders: LongRunReminders;
  #turns = new Map<string, TurnState>();
  #unsubscribe: (() => void) | null = null;
  #reminderTimer: Timer | null = null;

  constructor(deps: NotificationRouterDeps) {
    this.#deps = deps;
    this.#stream = new ForegroundStream({
      clock: deps.clock,
      windowMs: deps.config.timings.fgDebounceMs,
      deliver: (batch) => void this.#guard('foreground text', () => this.#deliverText(batch)),
    });
    this.#reminders = new LongRunReminders(deps.config.timings.longRunReminderMs);
  }

  start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.#deps.sessions.on((signal) => this.#onSignal(signal));
    this.#reminderTimer = this.#deps.clock.every(
      this.#deps.config.timings.reminderCheckIntervalMs,
      () => void this.#guard('long-run reminder check', () => this.#checkLongRuns()),
    );
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#reminderTimer?.cancel();
    this.#reminderTimer = null;
    this.#stream.flushAll();
  }

  async announceInterrupted(sessionIds: readonly string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    await this.#guard('interrupted announcement', async () => {
      const interrupted = new Map((await this.#deps.sessions.list(['interrupted'])).map((r) => [r.id, r]));
      const sends: Promise<void>[] = [];
      for (const id of sessionIds) {
        const record = interrupted.get(id);
        // Keyed per interruption and recipient: announcing again after a crash queues nothing twice.
        if (record)
          sends.push(
            this.#announce(
              record,
              { foreground: true, origin: true },
              interruptedText(record, { kind: 'restart' }),
              `restart-${id}-${record.completedAt ?? record.updatedAt}`,
            ),
          );
      }
      await Promise.all(sends);
    });
  }

  #onSignal(signal: SessionSignal): void {
    const session = signal.session;
    const record = session.record;
    switch (signal.type) {
      case 'launched':
        this.#turns.set(session.id, { startSeq: session.runStartSeq });
        this.#onLaunched(session, signal.kind, signal.via);
        return;
      case 'output':
        for (const { channel, target } of streamingChannels(record))
          this.#stream.add(session, channel, target, signal.text, signal.seq);
        return;
      case 'tool': {
        this.#stream.flushSession(session.id);
        void this.#announce(record, { foreground: true, origin: false }, toolUseLine(signal.name, signal.input));
        return;
      }
      case 'question':
        this.#turn(session.id).question = signal.text;
        return;
      case 'permission':
        this.#turn(session.id).permission = { tool: signal.tool, input: signal.input };
        return;
      case 'message': {
        const turn = this.#turn(session.id);
        delete turn.question;
        delete turn.permission;
        // An answered permission request continues the same turn; any other message starts a new one.
        if (!signal.answered) turn.startSeq = this.#deps.sessions.lastSeq(session.id);
        void this.#announce(
          record,
          { foreground: false, origin: true, ...via(signal.via) },
          respondedText(record.name, signal.text, signal.answered),
        );
        return;
      }
      case 'waiting':
        this.#onWaiting(session, signal.reason);
        return;
      case 'budgetExhausted':
        this.#stream.flushSession(session.id);
        void this.#announce(record, { foreground: true, origin: true }, budgetText(record, this.#runMs(session)));
        return;
      case 'ended':
        this.#onEnded(session, signal.via);
        return;
      case 'interrupted':
        this.#stream.flushSession(session.id);
        this.#forget(session.id);
        void this.#announce(
          record,
          { foreground: true, origin: true },
          interruptedText(record, { kind: 'stop', runMs: this.#runMs(session) }),
        );
        return;
      case 'view':
        this.#onView(session, signal.channel, signal.on);
        return;
      case 'running':
        return;
      default:
        signal satisfies never;
        return;
    }
  }

  /**
   * The launch line goes to the origin chat (not the one that typed the command, which has its reply), except on a
   * channel with threads: there the first launch line always goes, keyed as the session's thread, so the session's
   * later messages can go in the thread it opens.
   */
  #onLaunched(session: Session, kind: 'launch' | 'resume', commandChat: string | undefined): void {
    const record = session.record;
    const text = launchedText(record, kind);
    const origin = parseTarget(record.originChannel);
    const opensThread = kind === 'launch' && origin !== null && (this.#deps.threads?.(origin.channel) ?? false);
    if (!opensThread) {
      void this.#announce(record, { foreground: false, origin: true, ...via(commandChat) }, text);
      return;
    }
    void this.#send(origin, text, { key: sessionThreadKey(record.id, origin) });
  }

  #onWaiting(session: Session, reason: WaitingInfo['reason']): void {
    this.#stream.flushSession(session.id);
    // A stored approval has its own message, with buttons (approval-notices.ts).
    if (reason === 'permission' && session.pendingPermission?.approval) return;
    const turn = this.#turn(session.id);
    const info: WaitingInfo = {
      reason,
      preview: this.#turnOutput(session),
      quietMs: this.#deps.config.timings.safetyNetMs,
      ...(reason === 'question' && turn.question ? { question: turn.question } : {}),
      ...(reason === 'permission' && turn.permission ? { permission: turn.permission } : {}),
    };
    void this.#announce(
      session.record,
      { foreground: true, origin: true },
      {
        streaming: foregroundWaitingText(session.record, this.#runMs(session), info),
        origin: originWaitingText(session.record, info),
      },
    );
    delete turn.question;
  }

  #onEnded(session: Session, commandChat: string | undefined): void {
    this.#stream.flushSession(session.id);
    const record = session.record;
    const turn = this.#turns.get(session.id);
    this.#forget(session.id);
    // A budget stop was already announced by its own message; the failure that follows adds nothing.
    if (record.status === 'failed' && record.budgetExhausted) return;
    void this.#announce(
      record,
      { foreground: true, origin: true, ...via(commandChat) },
      {
        streaming: foregroundEndedText(record, this.#runMs(session)),
        origin: originEndedText(record, this.#turnOutput(session, turn)),
      },
    );
  }

  /**
   * A channel started or stopped streaming (claude_fg / claude_bg), which marked it as having seen the whole log.
   * Text still pending for it was shown by fg's catch-up (drop it), or was never shown before bg (drop it and move
   * the channel's seen mark back so the next catch-up includes it).
   */
  #onView(session: Session, channel: string, on: boolean): void {
    const dropped = this.#stream.discard(session.id, channel);
    if (dropped && !on) this.#deps.sessions.markSeen(session.id, channel, dropped.firstSeq - 1);
  }

  /** Queues a batch of streamed text; the channel's seen mark moves only once the Outbox has recorded it. */
  async #deliverText(batch: TextBatch): Promise<void> {
    const view = batch.session.record.foreground[batch.channel];
    if (!view?.on) {
      this.#deps.logger.warn(
        { session: batch.session.id, channel: batch.channel },
        'dropped streamed text for a channel that stopped streaming',
      );
      return;
    }
    const threadOf = sessionThreadKey(batch.session.id, batch.target);
    if (!(await this.#send(batch.target, batch.text, { threadOf }))) return;
    const current = batch.session.record.foreground[batch.channel];
    this.#deps.sessions.markSeen(
      batch.session.id,
      batch.channel,
      Math.max(current?.seenSeq ?? view.seenSeq, batch.lastSeq),
    );
  }

  #checkLongRuns(): void {
    const { sessions, clock } = this.#deps;
    for (const session of this.#reminders.due(sessions.liveSessions(), clock.now())) {
      void this.#announce(
        session.record,
        { foreground: false, origin: true },
        reminderText(session.record, this.#runMs(session)),
      );
    }
  }

  /**
   * Sends one message per recipient: channels streaming the session get `text.streaming`, the origin (when it does
   * not stream the session) gets `text.origin`. A channel that is both gets one message, never two. The messages are
   * handed to the Outbox at the call (in order); resolves once they are recorded (failures are logged).
   */
  async #announce(
    record: Readonly<StoredSession>,
    audience: Audience,
    text: string | { streaming: string; origin: string },
    key?: string,
  ): Promise<void> {
    const sends: Promise<boolean>[] = [];
    for (const recipient of recipients(record, audience)) {
      const body = typeof text === 'string' ? text : recipient.streaming ? text.streaming : text.origin;
      sends.push(
        this.#send(recipient.target, body, {
          threadOf: sessionThreadKey(record.id, recipient.target),
          ...(key === undefined ? {} : { key: `${key}-${formatTarget(recipient.target)}` }),
        }),
      );
    }
    await Promise.all(sends);
  }

  /** Hands one message to the Outbox (at the call); resolves true once recorded, false (logged) when it could not be. */
  async #send(
    target: ChannelTarget,
    text: string,
    options: { key?: string; threadOf?: string } = {},
  ): Promise<boolean> {
    try {
      const { key, threadOf } = options;
      await this.#deps.outbox.send(
        target,
        { text, ...(threadOf ? { threadOf } : {}) },
        key === undefined ? {} : { key },
      );
      return true;
    } catch (error) {
      this.#deps.logger.error({ err: error, target: formatTarget(target) }, 'could not queue a notification');
      return false;
    }
  }

  #runMs(session: Session): number {
    const end = session.record.completedAt ?? this.#deps.clock.now();
    return end - (session.runStartedAt || session.record.startedAt);
  }

  /**
   * The text a preview is cut from: the last output blocks of the current turn (never an earlier turn's, which the
   * user already saw with that turn's message), joined by newlines; '' when the turn wrote nothing.
   */
  #turnOutput(session: Session, turn = this.#turns.get(session.id)): string {
    const from = turn?.startSeq ?? session.runStartSeq;
    return session.output
      .after(from)
      .slice(-PREVIEW_BLOCKS)
      .map((b) => b.text)
      .join('\n');
  }

  #turn(sessionId: string): TurnState {
    let turn = this.#turns.get(sessionId);
    if (!turn) {
      turn = {};
      this.#turns.set(sessionId, turn);
    }
    return turn;
  }

  #forget(sessionId: string): void {
    this.#turns.delete(sessionId);
    this.#reminders.forget(sessionId);
  }

  /** Runs work started by a timer, so one failure is logged instead of escaping into the clock. */
  /** Runs `work` (sync or async) and logs its failure; resolves once it is done. */
  async #guard(what: string, work: () => void | Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.#deps.logger.error({ err: error }, `notification ${what} failed`);
    }
  }
}

function via(channel: string | undefined): { via?: string } {
  return channel ? { via: channel } : {};
}

// Wakes the orchestrator when a coding session needs it: a turn that ends waiting for input (question, permission,
// turn end, stalled), or a session that completed, failed, was killed or was interrupted by a daemon stop or crash.
// Each event is stored in the wake outbox first, then delivered in order (see route-wake.ts for where to); a failed
// delivery is retried, an event no session can take is logged at warn and counted, never dropped silently.
import type { Kysely } from 'kysely';
import type { SessionSignal } from '../../coding/session.ts';
import type { SessionManager } from '../../coding/session-manager.ts';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import type { StepResult } from '../../core/work-loop.ts';
import { WorkLoop } from '../../core/work-loop.ts';
import type { StoredSession } from '../../store/coding-session-types.ts';
import type { Database } from '../../store/tables/index.ts';
import type { WakeEvent, WakeEventKind } from '../../store/wake-events.ts';
import { WakeEventStore } from '../../store/wake-events.ts';
import type { EngineApi } from '../api.ts';
import type { Heartbeat } from '../scheduler/heartbeat.ts';
import type { WakeDelivery } from './route-wake.ts';
import { routeWake } from './route-wake.ts';
import { endedEventText, outputTail, waitingEventText } from './wake-text.ts';

export interface WakeRouterDeps {
  /** The daemon's database (migrations 300–399 applied): `sqliteKysely(db)` on SQLite. */
  db: Kysely<Database>;
  sessions: Pick<SessionManager, 'on' | 'get' | 'outputBlocks'>;
  engine: Pick<EngineApi, 'postSystemMessage'>;
  /** The last resort for a wake with no session to go to (a heartbeat run now); without it such wakes are undelivered. */
  heartbeat?: Pick<Heartbeat, 'runNow'>;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'timings' | 'wake'>;
}

/** Counters since start (debounced, delivered, undelivered, failed attempts) and the outbox as stored. */
export interface WakeStats {
  delivered: number;
  undelivered: number;
  debounced: number;
  failedAttempts: number;
  /** Events waiting for delivery now. */
  pending: number;
  /** The newest undelivered events (from the store, survives restarts). */
  recentUndelivered: Pick<WakeEvent, 'id' | 'codingSessionId' | 'kind' | 'createdAt' | 'error'>[];
}

export interface WakeRouter {
  /** Subscribes to the SessionManager and delivers events left pending by the last run (also after `stopDelivery`). */
  start(): Promise<void>;
  /**
   * Cluster: subscribes to this node's SessionManager only (its sessions' events are stored); the node holding the
   * wake router's lease delivers them (`start`). Idempotent.
   */
  startIntake(): void;
  /** Cluster: delivers what is pending now (events another node stored); a no-op unless started. */
  poke(): void;
  /** Cluster: stops delivering (the lease was lost) but keeps storing this node's sessions' events. */
  stopDelivery(): Promise<void>;
  /** Unsubscribes, stops retrying and waits for the delivery in flight. Call after the SessionManager stopped. */
  stop(): Promise<void>;
  /**
   * Stores an "interrupted" event for each coding session the last crash cut off (the ids SessionManager.restore()
   * returns); resolves once they are stored (before the caller forgets the interruptions). Delivered once started.
   */
  announceInterrupted(sessionIds: readonly string[]): Promise<void>;
  /**
   * Delivers a text now along the wake route with no origin session (most recent foreground, heartbeat, a heartbeat
   * run). Not stored: the caller learns the outcome at once (null: nothing could take it). Rejects on engine errors.
   * `messageId` (default: a new one) is the engine's idempotency id: delivering again with it is a duplicate.
   */
  deliver(text: string, origin: 'wake' | 'hook', messageId?: string): Promise<WakeDelivery | null>;
  stats(): Promise<WakeStats>;
  /** Resolves when every event signalled so far is stored and no delivery is in flight. */
  idle(): Promise<void>;
}

/**
 * The component that handles a coding session's events itself (the Linear pipeline, code_run), if any: such a
 * session never wakes the orchestrator, whose user did not launch it and would only be interrupted by it.
 */
function ownedBy(record: Pick<StoredSession, 'spec'>): string | undefined {
  return record.spec.owner;
}

/** Builds the wake router over the wake outbox in `deps.db`; nothing happens until `start()`. */
export function createWakeRouter(deps: WakeRouterDeps): WakeRouter {
  const store = new WakeEventStore(deps.db);
  const logger = deps.logger.child({ part: 'wake' });
  const { clock, config } = deps;
  const lastWaiting = new Map<string, number>();
  const counters = { delivered: 0, undelivered: 0, debounced: 0, failedAttempts: 0 };
  let unsubscribe: (() => void) | null = null;
  let started = false;
  /** The events signalled so far, stored one after another (the outbox order is the order they happened). */
  let writes: Promise<void> = Promise.resolve();

  /** Stores an event (after those signalled before it), then kicks the delivery; a failure to store it is logged. */
  function record(session: Pick<StoredSession, 'id' | 'originSessionId'>, kind: WakeEventKind, text: string): void {
    const input = {
      messageId: `wake-${newId(16)}`,
      codingSessionId: session.id,
      kind,
      originSessionId: session.originSessionId,
      text,
      now: clock.now(),
    };
    writes = writes.then(async () => {
      try {
        const event = await store.insert(input);
        logger.debug({ event: event?.id, session: session.id, kind }, 'wake event stored');
        kick();
      } catch (error) {
        logger.error(
          { session: session.id, kind, err: errorMessage(error) },
          'wake event could not be stored; the orchestrator is not told of it',
        );
      }
    });
  }

  function onSignal(signal: SessionSignal): void {
    const session = signal.session;
    if (
      ownedBy(session.record) &&
      (signal.type === 'waiting' || signal.type === 'ended' || signal.type === 'interrupted')
    )
      return;
    switch (signal.type) {
      case 'waiting': {
        const now = clock.now();
        const last = lastWaiting.get(session.id);
        if (last !== undefined && now - last < config.timings.waitingEventDebounceMs) {
          counters.debounced += 1;
          logger.debug(
            { session: session.id, reason: signal.reason, sinceLastMs: now - last },
            'waiting event within the debounce window; skipped',
          );
          return;
        }
        lastWaiting.set(session.id, now);
        record(session.record, 'waiting', waitingEventText(session.record, signal.reason, signal.preview));
        return;
      }
      case 'ended':
        lastWaiting.delete(session.id);
        record(session.record, 'ended', endedEventText(session.record, session.preview()));
        return;
      case 'interrupted':
        lastWaiting.delete(session.id);
        record(session.record, 'interrupted', endedEventText(session.record, session.preview()));
        return;
      case 'launched':
      case 'running':
      case 'output':
      case 'tool':
      case 'question':
      case 'permission':
      case 'message':
      case 'budgetExhausted':
      case 'view':
        return;
      default:
        signal satisfies never;
        return;
    }
  }

  /** Delivers the oldest pending event; a failure stays queued and the loop retries after `wake.retryMs`. */
  async function deliverOldest(): Promise<StepResult> {
    const event = await store.oldestPending();
    if (!event) return 'quiet';
    try {
      const delivery = await routeWake(deps, {
        text: event.text,
        origin: 'wake',
        originSessionId: event.originSessionId,
        messageId: event.messageId,
        at: event.createdAt,
      });
      if (delivery) {
        await store.markDelivered(event.id, delivery.sessionId, delivery.via, clock.now());
        counters.delivered += 1;
        logger.info(
          {
            event: event.id,
            session: event.codingSessionId,
            kind: event.kind,
            to: delivery.sessionId,
            via: delivery.via,
            duplicate: delivery.duplicate,
          },
          'wake delivered',
        );
      } else {
        const reason = `no session to wake: ${event.originSessionId ? `origin session ${event.originSessionId} no longer exists, ` : 'no origin session, '}no foreground user session, no heartbeat session${deps.heartbeat ? '' : ', no heartbeat to run'}`;
        await store.markUndelivered(event.id, reason, clock.now());
        counters.undelivered += 1;
        logger.warn(
          { event: event.id, session: event.codingSessionId, kind: event.kind, undelivered: counters.undelivered },
          `wake undelivered: ${reason}`,
        );
      }
      await store.trim(config.wake.keepEvents);
      return 'more';
    } catch (error) {
      counters.failedAttempts += 1;
      try {
        await store.recordFailure(event.id, errorMessage(error));
      } catch (storeError) {
        logger.error({ err: errorMessage(storeError) }, 'could not record a failed wake delivery');
      }
      logger.error(
        { event: event.id, session: event.codingSessionId, err: errorMessage(error), retryInMs: config.wake.retryMs },
        'wake delivery failed; it stays queued and is retried',
      );
      throw error;
    }
  }

  /** Stores an "interrupted" event per session a crash cut off (keyed per interruption: once however often announced). */
  async function storeInterrupted(sessionIds: readonly string[]): Promise<void> {
    for (const id of sessionIds) {
      let record: StoredSession;
      try {
        record = await deps.sessions.get(id);
      } catch (error) {
        logger.error({ session: id, err: errorMessage(error) }, 'interrupted session not found; cannot announce it');
        continue;
      }
      if (ownedBy(record)) continue;
      const tail = outputTail(deps.sessions.outputBlocks(record).map((b) => b.text));
      // One id per interruption: announcing the same ids twice stores one event.
      const messageId = `wake-restored-${id}-${record.completedAt ?? record.updatedAt}`;
      const event = await store.insert({
        messageId,
        codingSessionId: id,
        kind: 'interrupted',
        originSessionId: record.originSessionId,
        text: endedEventText(record, tail),
        now: clock.now(),
      });
      if (event)
        logger.info({ session: id, name: record.name }, 'interrupted session will be announced to the orchestrator');
    }
  }

  const loop = new WorkLoop({ clock, step: deliverOldest, retryDelay: () => config.wake.retryMs });

  function kick(): void {
    if (started) loop.kick();
  }

  return {
    async start() {
      if (started) return;
      started = true;
      // Delivered again after `stopDelivery` (the `primary` lease taken back): the stopped loop takes kicks again.
      loop.start();
      unsubscribe ??= deps.sessions.on(onSignal);
      kick();
      await loop.idle();
    },
    startIntake() {
      unsubscribe ??= deps.sessions.on(onSignal);
    },
    poke() {
      kick();
    },
    async stopDelivery() {
      started = false;
      await writes;
      await loop.stop();
    },
    async stop() {
      unsubscribe?.();
      unsubscribe = null;
      await writes;
      await loop.stop();
    },
    async announceInterrupted(sessionIds) {
      // In the outbox order too: after the events signalled before, before those signalled after.
      const stored = writes.then(() => storeInterrupted(sessionIds));
      writes = stored.catch(() => undefined);
      await stored;
      kick();
    },
    deliver(text, origin, messageId) {
      return routeWake(deps, {
        text,
        origin,
        originSessionId: null,
        messageId: messageId ?? `${origin}-${newId(16)}`,
        at: clock.now(),
      });
    },
    async stats() {
      const counts = await store.counts();
      const undelivered = await store.recent('undelivered', 5);
      return {
        ...counters,
        pending: counts.pending,
        recentUndelivered: undelivered.map((e) => ({
          id: e.id,
          codingSessionId: e.codingSessionId,
          kind: e.kind,
          createdAt: e.createdAt,
          error: e.error,
        })),
      };
    },
    async idle() {
      for (;;) {
        const stored = writes;
        await stored;
        await loop.idle();
        if (stored === writes) return;
      }
    },
  };
}

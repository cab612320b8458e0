// The members of the `primary` singleton, in the order they start: the outbox's deliveries, the engine (its logs first
// rebuilt from the database on PostgreSQL), the engine calls of other nodes (PostgreSQL), the scheduler, the wake
// router's deliveries, Linear, then the chat connectors' receiving, and a poll that picks up what other nodes queued
// (outbox messages, wake events, cron tasks) between the notifications that announce them (webhook deliveries have
// their own wake-ups: webhook-wakeups.ts). Everything the members need is passed in by shape: cluster/ imports only
// store/ and core/.
import type { Clock, Timer } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { PgListener } from './pg-listener.ts';
import type { ServiceGroup } from './service-group.ts';
import type { SingletonService } from './singletons.ts';

/** NOTIFY channels the PostgreSQL triggers of migration 840 send on (see store/cluster-migrations.ts). */
export const OUTBOX_CHANNEL = 'switchboard_outbox';
export const WAKE_CHANNEL = 'switchboard_wake';

/** What the primary members are built from. */
export interface PrimaryDeps {
  outbox: SingletonService & { wake(): Promise<void> };
  engine: SingletonService;
  /** Rebuilds the engine's logs from the database before it starts (PostgreSQL); null on SQLite. */
  rebuildEngine: (() => Promise<void>) | null;
  scheduler: SingletonService & { cron: { rearm(): Promise<void> } };
  wake: { start(): Promise<void>; stopDelivery(): Promise<void>; poke(): void };
  linear: SingletonService | null;
  /** The chat connectors but the web page's, each with its singleton name (`connector:<channel>[:<account>]`). */
  connectors: readonly { name: string; service: SingletonService }[];
  /** Runs the engine calls other nodes stored (PostgreSQL), or null. */
  engineCalls: SingletonService | null;
  /** The node's LISTEN connection (PostgreSQL), or null. */
  listener: Pick<PgListener, 'on' | 'onConnect'> | null;
  clock: Clock;
  logger: Logger;
  /** How often the holder looks for outbox messages and wake events queued on other nodes (with a listener). */
  pollMs: number;
}

/** Adds the primary members to `group` (see the top); the notifications wake the outbox and the wake router. */
export function addPrimaryMembers(group: ServiceGroup, deps: PrimaryDeps): void {
  const { outbox, wake, listener, logger } = deps;
  const nudge = (): void => {
    outbox.wake().catch((error: unknown) => logger.warn({ err: error }, 'could not look for queued outbox messages'));
    wake.poke();
    deps.scheduler.cron
      .rearm()
      .catch((error: unknown) => logger.warn({ err: error }, 'could not look for changed cron tasks'));
  };
  // Both are no-ops on a node that does not serve them; subscribed for the life of the listener.
  listener?.on(OUTBOX_CHANNEL, nudge);
  listener?.on(WAKE_CHANNEL, () => wake.poke());
  listener?.onConnect(nudge);
  group.add('outbox', outbox);
  const { rebuildEngine, engine } = deps;
  group.add('engine', {
    async start() {
      await rebuildEngine?.();
      await engine.start();
    },
    stop: () => engine.stop(),
  });
  if (deps.engineCalls) group.add('engine-calls', deps.engineCalls);
  group.add('scheduler', deps.scheduler);
  group.add('wake', { start: () => wake.start(), stop: () => wake.stopDelivery() });
  if (deps.linear) group.add('linear', deps.linear);
  for (const { name, service } of deps.connectors) group.add(name, service);
  if (!listener) return;
  let poll: Timer | null = null;
  group.add('poll', {
    async start() {
      poll = deps.clock.every(deps.pollMs, nudge);
    },
    async stop() {
      poll?.cancel();
      poll = null;
    },
  });
}

/** The singleton name of a chat connector: `connector:<channel>` or `connector:<channel>:<account>`. */
export function connectorSingletonName(channel: string, account: string | undefined): string {
  return account ? `connector:${channel}:${account}` : `connector:${channel}`;
}

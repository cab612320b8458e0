// Durable outbound delivery: `send` records the message in the store and resolves; one delivery lane per conversation
// hands the oldest pending message to its channel's connector (split to the connector's limit), retries with backoff, and
// dead-letters it after the last attempt. Lanes are independent, so a slow or failing connector delays only its own chats.
// Each part is claimed (`sending`, committed) before the connector is called and settled right after, so a crash inside
// a send is detected on the next start: an idempotent connector (web) gets it again under the same delivery key (exactly
// once); any other (Telegram, no idempotency key) gets it again too (at least once: a reply nobody sees is worse than one
// seen twice, and the claim narrows the duplicate window to the API call itself), counted as a failed attempt so a
// message that keeps crashing the daemon ends as a dead letter after `maxAttempts`.
// Buttons go on a message's last part. A keyed message keeps the ref its connector returned for its last part, in the
// same commit that marks it sent; a later message with `replaces: <that key>` to the same conversation is delivered as
// one `connector.edit` of that ref (text fitted to one message) where the connector can edit, else as a new message. An
// edit is claimed and settled like a send (repeating one after a crash is harmless); an edit the service refuses for
// good (`EditRefusedError`: the message was deleted or is too old) falls back to a new message. A message's file is
// stored with its row and goes with its last part to a connector with `files`, inline as text elsewhere
// (outbox-file.ts). One row's delivery is in outbox-delivery.ts.
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Clock } from '../core/clock.ts';
import type { OutboxConfig } from '../core/config-channels.ts';
import { errorMessage, fromZodError, invalidInput } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { StepResult } from '../core/work-loop.ts';
import { WorkLoop } from '../core/work-loop.ts';
import type { WriteFence } from '../store/cluster-fence.ts';
import type { OutboxRecord } from '../store/outbox-store.ts';
import { OutboxStore } from '../store/outbox-store.ts';
import type { Database } from '../store/tables/index.ts';
import type { ChannelTarget, Connector, OutboundMessage, Outbox, SendOptions } from './connector.ts';
import { formatTarget } from './connector.ts';
import type { ChannelCounts } from './outbox-delivery.ts';
import { OutboxDelivery } from './outbox-delivery.ts';
import { buttonRowsSchema } from './outbox-edit.ts';
import { boundedFile, outboundFileSchema } from './outbox-file.ts';
import { StopSignal } from './stop-signal.ts';

export interface OutboxDeps {
  /** The daemon's database (migrations 200+ applied): `sqliteKysely(db)`, or PostgreSQL. */
  db: Kysely<Database>;
  /** `config.channels.outbox`. */
  config: OutboxConfig;
  clock: Clock;
  logger: Logger;
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
  /**
   * Checked in the transaction of each claim (a cluster on PostgreSQL: this node still holds `primary`, see
   * store/cluster-fence.ts); a refused claim sends nothing. None on SQLite.
   */
  fence?: WriteFence;
}

/** Delivery counters since start, plus the store's current backlog. */
export interface OutboxMetrics {
  /** Messages delivered completely (all parts). */
  sent: number;
  /** Failed attempts that were scheduled for another try. */
  retried: number;
  /** Messages given up on (dead letters), including those for channels without a connector. */
  failed: number;
  /** Of `failed`: messages whose channel had no connector. */
  noConnector: number;
  /** Messages waiting in the store (to be sent or retried). */
  pending: number;
  /** Dead letters kept in the store. */
  deadLetters: number;
  byChannel: Record<string, ChannelCounts>;
}

/** A dead letter as shown to an operator. */
export interface DeadLetter {
  id: number;
  target: ChannelTarget;
  text: string;
  attempts: number;
  error: string | null;
  createdAt: number;
  failedAt: number;
}

const targetSchema = z.strictObject({
  channel: z.string().regex(/^[^|\s]+$/, 'a channel name without spaces or "|"'),
  account: z.string().min(1).optional(),
  chat: z.string().min(1, 'must not be empty'),
  thread: z.string().min(1).optional(),
});

/**
 * How long a delivered message with an idempotency key is kept so that a repeated send under that key stays a no-op.
 * Keys are repeated by restore after a crash (the engine's recorded replies, restart notices), i.e. at the next start.
 */
export const SENT_KEY_RETENTION_MS = 30 * 24 * 3_600_000;

/** The error recorded on a message a crash interrupted mid-send on a connector without idempotency keys. */
export const INTERRUPTED_SEND = 'interrupted by a daemon crash while being sent; sent again, so it may arrive twice';

/** The durable Outbox. Register connectors, then `start()`; messages sent before `start()` wait in the store. */
export class DurableOutbox implements Outbox {
  #deps: OutboxDeps;
  #store: OutboxStore;
  #connectors = new Map<string, Connector>();
  /** One loop per conversation with work pending or scheduled; a lane that ends quiet is dropped. */
  #lanes = new Map<string, WorkLoop>();
  #started = false;
  /** The `start()` in progress, if any. */
  #starting: Promise<void> | null = null;
  /** The last recording `send` started: each waits for the one before, so messages are stored in call order. */
  #recording: Promise<unknown> = Promise.resolve();
  #stop = new StopSignal();
  #delivery: OutboxDelivery;

  constructor(deps: OutboxDeps) {
    this.#deps = deps;
    this.#store = new OutboxStore(deps.db, deps.fence);
    this.#delivery = new OutboxDelivery({
      store: this.#store,
      config: deps.config,
      clock: deps.clock,
      logger: deps.logger,
      random: deps.random,
      running: () => this.#started,
      stopSignal: () => this.#stop,
    });
  }

  /**
   * Makes `connector` the one delivering messages for its channel and account (replaces an earlier one of the same
   * channel and account).
   */
  register(connector: Connector): void {
    this.#connectors.set(connectorKey(connector.channel, connector.account), connector);
  }

  /**
   * The connector of a stored message: the one of its target's channel and account; for a target naming no account,
   * the channel's only connector (a channel with one account needs no account segment).
   */
  #connectorFor(record: OutboxRecord): Connector | undefined {
    const { account } = JSON.parse(record.target) as ChannelTarget;
    const exact = this.#connectors.get(connectorKey(record.channel, account));
    if (exact || account !== undefined) return exact;
    const ofChannel = [...this.#connectors.values()].filter((c) => c.channel === record.channel);
    return ofChannel.length === 1 ? ofChannel[0] : undefined;
  }

  /**
   * Records the message durably and resolves once it is committed; delivery happens in the background. Messages are
   * recorded in the order of the calls, awaited or not. Rejects with invalid_input for a malformed target or an empty
   * text, malformed buttons (an empty label or command, a command over 64 bytes), an empty `replaces` or a malformed
   * file (a name with a path separator, no MIME type, empty content; nothing is recorded then). A file's content over
   * MAX_FILE_BYTES is recorded cut, with a last line saying so. A message whose `options.key` is already recorded (pending, sent within SENT_KEY_RETENTION_MS, or
   * dead) is not recorded again. `replaces` names the key of an earlier message to the same target.
   */
  async send(target: ChannelTarget, message: OutboundMessage, options: SendOptions = {}): Promise<void> {
    const parsed = targetSchema.safeParse(target);
    if (!parsed.success) throw fromZodError(parsed.error, 'target');
    if (typeof message.text !== 'string' || message.text.trim() === '')
      throw invalidInput('text: must not be empty', 'text');
    const buttons = buttonRowsSchema.optional().safeParse(message.buttons);
    if (!buttons.success) throw fromZodError(buttons.error, 'buttons');
    if (message.replaces !== undefined && (typeof message.replaces !== 'string' || message.replaces.trim() === ''))
      throw invalidInput('replaces: must be the key of an earlier message', 'replaces');
    if (message.threadOf !== undefined && (typeof message.threadOf !== 'string' || message.threadOf.trim() === ''))
      throw invalidInput('threadOf: must be the key of an earlier message', 'threadOf');
    const file = outboundFileSchema.optional().safeParse(message.file);
    if (!file.success) throw fromZodError(file.error, 'file');
    const clean: ChannelTarget = parsed.data;
    const key = formatTarget(clean);
    const entry = {
      targetKey: key,
      target: JSON.stringify(clean),
      channel: clean.channel,
      text: message.text,
      replyTo: message.replyTo,
      dedupeKey: options.key,
      buttons: buttons.data && buttons.data.length > 0 ? JSON.stringify(buttons.data) : undefined,
      replaces: message.replaces,
      threadOf: message.threadOf,
      file: file.data ? JSON.stringify(boundedFile(file.data)) : undefined,
    };
    const now = this.#deps.clock.now();
    const recorded = this.#recording.then(() => this.#store.enqueue(entry, now, { fenced: options.fenced === true }));
    this.#recording = recorded.catch(() => undefined);
    const id = await recorded;
    if (id === null) {
      this.#deps.logger.debug(
        { target: key, key: options.key },
        'outbound message already recorded under its key; not queued again',
      );
      return;
    }
    this.#deps.logger.debug({ outboxId: id, target: key, length: message.text.length }, 'outbound message queued');
    this.#kick(key);
  }

  /**
   * Starts delivering: every conversation with pending messages (also those left by an earlier run) gets a lane. A
   * message left claimed by a crash is sent again (see the top). Register the connectors first. Resolves once the
   * lanes are started.
   */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#starting ??= this.#begin().finally(() => {
      this.#starting = null;
    });
    await this.#starting;
  }

  async #begin(): Promise<void> {
    this.#stop = new StopSignal();
    await this.#prune();
    // Claimed messages are settled before any lane runs, so none overtakes an older message of its conversation.
    await this.#recoverClaimed();
    // Started before the pending conversations are read: a `send` that lands after the read kicks its own lane.
    this.#started = true;
    const targets = await this.#store.pendingTargets();
    if (targets.length > 0) this.#deps.logger.info({ conversations: targets.length }, 'resuming outbound delivery');
    for (const key of targets) this.#kick(key);
  }

  /**
   * Stops delivering; pending messages stay in the store, and every `send` called before resolves has been recorded. A
   * send still in flight is abandoned and stays claimed: the next start treats it as a send a crash interrupted.
   */
  async stop(): Promise<void> {
    await this.#recording;
    await this.#starting;
    if (!this.#started) return;
    this.#started = false;
    this.#stop.stop();
    const lanes = [...this.#lanes.values()];
    this.#lanes.clear();
    await Promise.all(lanes.map((lane) => lane.stop()));
  }

  /**
   * Cluster: gives a lane to every conversation with pending messages (messages another node recorded: only the node
   * holding the outbox's lease delivers). A no-op unless started.
   */
  async wake(): Promise<void> {
    if (!this.#started) return;
    for (const key of await this.#store.pendingTargets()) this.#kick(key);
  }

  /** Resolves once no lane is sending (scheduled retries do not count). For tests and orderly shutdown. */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.#lanes.values()].filter((lane) => lane.running);
      if (running.length === 0) return;
      await Promise.all(running.map((lane) => lane.idle()));
    }
  }

  /** Delivery counters and backlog, for /healthz. */
  async metrics(): Promise<OutboxMetrics> {
    const counts = await this.#store.counts();
    return {
      ...this.#delivery.totals,
      pending: counts.pending,
      deadLetters: counts.failed,
      byChannel: Object.fromEntries([...this.#delivery.byChannel].map(([channel, c]) => [channel, { ...c }])),
    };
  }

  /** Dead letters, newest first. */
  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    return (await this.#store.listFailed(limit)).map((r) => ({
      id: r.id,
      target: JSON.parse(r.target) as ChannelTarget,
      text: r.text,
      attempts: r.attempts,
      error: r.lastError,
      createdAt: r.createdAt,
      failedAt: r.updatedAt,
    }));
  }

  /** Puts a dead letter back in its conversation's queue; false when there is no dead letter with this id. */
  async retry(id: number): Promise<boolean> {
    const record = await this.#store.get(id);
    if (!record || !(await this.#store.requeue(id, this.#deps.clock.now()))) return false;
    this.#kick(record.targetKey);
    return true;
  }

  #kick(key: string): void {
    if (!this.#started) return;
    let lane = this.#lanes.get(key);
    if (!lane) {
      const loop: WorkLoop = new WorkLoop({
        clock: this.#deps.clock,
        step: () => this.#laneStep(key),
        // Only the store can throw here (connector failures are handled per message); try the lane again later.
        retryDelay: () => this.#deps.config.baseDelayMs,
        onError: (error) =>
          this.#deps.logger.error({ target: key, err: errorMessage(error) }, 'outbound delivery lane failed; retrying'),
        onQuiet: () => {
          if (this.#lanes.get(key) === loop) this.#lanes.delete(key);
        },
      });
      lane = loop;
      this.#lanes.set(key, lane);
    }
    // The loop starts on a microtask, so no connector code runs inside the caller's `send`.
    lane.kick();
  }

  /** Delivers a conversation's oldest message when it is due; the lane sleeps until then otherwise. */
  async #laneStep(key: string): Promise<StepResult> {
    if (!this.#started) return 'quiet';
    const head = await this.#store.head(key);
    if (!head) return 'quiet';
    const wait = head.nextAttemptAt - this.#deps.clock.now();
    if (wait > 0) return { wakeInMs: wait };
    await this.#delivery.deliver(head, this.#connectorFor(head));
    return 'more';
  }

  async #prune(): Promise<void> {
    const now = this.#deps.clock.now();
    const removed = await this.#store.pruneFailed(now - this.#deps.config.deadLetterRetentionMs);
    if (removed > 0) this.#deps.logger.info({ removed }, 'old dead letters removed from the outbox');
    await this.#store.pruneSent(now - SENT_KEY_RETENTION_MS);
  }

  /**
   * Settles the messages a crash left claimed: an idempotent connector gets them again under the same delivery key
   * (exactly once); any other gets them again as a failed attempt (at least once; a dead letter after maxAttempts).
   */
  async #recoverClaimed(): Promise<void> {
    const now = this.#deps.clock.now();
    for (const record of await this.#store.claimed()) {
      const connector = this.#connectorFor(record);
      if (connector?.idempotent) {
        await this.#store.unclaim(record.id, now);
        this.#deps.logger.info(
          { outboxId: record.id, target: record.targetKey },
          'outbound message interrupted mid-send; sending it again under the same delivery key',
        );
        continue;
      }
      const attempts = record.attempts + 1;
      if (attempts >= this.#deps.config.maxAttempts) {
        await this.#delivery.deadLetter(record, attempts, INTERRUPTED_SEND);
        continue;
      }
      await this.#store.recordFailure(record.id, attempts, now, INTERRUPTED_SEND, now);
      this.#deps.logger.warn(
        { outboxId: record.id, target: record.targetKey, partsSent: record.partsSent, attempts },
        'outbound message interrupted mid-send by a crash; sending it again (it may arrive twice: the channel has no idempotency key)',
      );
    }
  }
}

function connectorKey(channel: string, account: string | undefined): string {
  return account === undefined ? channel : `${channel}|${account}`;
}

/** Builds the durable Outbox over the daemon's database. Register connectors on it, then call `start()`. */
export function createOutbox(deps: OutboxDeps): DurableOutbox {
  return new DurableOutbox(deps);
}

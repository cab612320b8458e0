// Delivery of one outbox row through its connector, and how it is settled in the store: the parts of a new message
// (each claimed before the connector call and settled after; buttons on the last part, whose ref a keyed row keeps in
// the commit that marks it sent), or one edit of the message it replaces, failures retried with backoff or
// dead-lettered, and the delivery counters. The lanes, crash recovery and the public API are in outbox.ts.
import { backoffDelay } from '../core/backoff.ts';
import type { Clock, Timer } from '../core/clock.ts';
import type { OutboxConfig } from '../core/config-channels.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { OutboxRecord, OutboxStore } from '../store/outbox-store.ts';
import type { ChannelTarget, ChatButton, Connector, OutboundFile, OutboundMessage, SentMessage } from './connector.ts';
import { classifyDeliveryFailure, DeliveryError } from './delivery-error.ts';
import { EditRefusedError, fitOneMessage, storedButtons } from './outbox-edit.ts';
import { inlineText, storedFile } from './outbox-file.ts';
import { splitMessage } from './split-message.ts';
import type { StopSignal } from './stop-signal.ts';

/** Delivery outcomes per channel since start. */
export interface ChannelCounts {
  sent: number;
  retried: number;
  failed: number;
}

/** What one row's delivery needs from the outbox that runs it. */
export interface DeliveryDeps {
  store: OutboxStore;
  config: OutboxConfig;
  clock: Clock;
  logger: Logger;
  random: (() => number) | undefined;
  /** False once the outbox is stopping: a call cut off then stays claimed (the next start recovers it). */
  running: () => boolean;
  /** The current run's stop signal; a connector call in flight is abandoned when it fires. */
  stopSignal: () => StopSignal;
}

/** Delivers outbox rows and counts the outcomes. One per outbox. */
export class OutboxDelivery {
  /** Totals since start: delivered, retried, dead-lettered, and of those dead letters the ones without a connector. */
  readonly totals = { sent: 0, retried: 0, failed: 0, noConnector: 0 };
  readonly byChannel = new Map<string, ChannelCounts>();
  #deps: DeliveryDeps;

  constructor(deps: DeliveryDeps) {
    this.#deps = deps;
  }

  /**
   * Delivers `record` (the head of its conversation) through `connector`, or dead-letters it when there is none.
   * Resolves once the row is settled: sent, progressed, scheduled for a retry, dead, or left claimed by a stop.
   */
  async deliver(record: OutboxRecord, connector: Connector | undefined): Promise<void> {
    if (!connector) {
      const { account } = JSON.parse(record.target) as ChannelTarget;
      const which =
        account === undefined ? `channel "${record.channel}"` : `account "${account}" of channel "${record.channel}"`;
      await this.deadLetter(record, record.attempts, `no connector for ${which}`);
      this.totals.noConnector += 1;
      return;
    }
    const target = await this.#threadTarget(record, connector, JSON.parse(record.target) as ChannelTarget);
    const buttons = storedButtons(record.buttons);
    const editRef = await this.#editRef(record, connector);
    if (editRef !== null && (await this.#edit(record, connector, target, editRef, buttons)) !== 'refused') return;
    // A file goes to a connector that takes files with the last part; any other gets its inline form as the text.
    const file = storedFile(record.file);
    const content =
      file === undefined
        ? { text: record.text }
        : connector.files
          ? { text: record.text, file }
          : { text: inlineText(record.text, file) };
    await this.#sendParts(record, connector, target, buttons, content);
  }

  /** Another sender claimed `record` between our read and our claim (it was settled or taken over): we send nothing. */
  #claimedElsewhere(record: OutboxRecord): void {
    this.#deps.logger.warn(
      { outboxId: record.id, target: record.targetKey },
      'outbound message was claimed by another sender; not sending it here',
    );
  }

  /** Marks `record` a dead letter after `attempts`, counts and logs it. */
  async deadLetter(record: OutboxRecord, attempts: number, reason: string): Promise<void> {
    await this.#deps.store.markFailed(record.id, attempts, reason, this.#deps.clock.now());
    this.#count(record.channel, 'failed');
    this.#deps.logger.error(
      { outboxId: record.id, target: record.targetKey, attempts, err: reason, length: record.text.length },
      'outbound message failed for good; kept as a dead letter',
    );
  }

  async #sendParts(
    record: OutboxRecord,
    connector: Connector,
    target: ChannelTarget,
    buttons: ChatButton[][] | undefined,
    content: { text: string; file?: OutboundFile },
  ): Promise<void> {
    const { clock, logger, store } = this.#deps;
    const parts = splitMessage(content.text, connector.maxMessageLength);
    // A file whose message is longer than the connector lets go with a file is a part of its own, after the text.
    const caption = connector.maxFileCaptionLength;
    if (content.file && caption !== undefined && (parts.at(-1)?.length ?? 0) > caption) parts.push('');
    let attempts = record.attempts;
    let ref: string | null = null;
    for (let index = record.partsSent; index < parts.length; index += 1) {
      const last = index + 1 === parts.length;
      const message: OutboundMessage = {
        text: parts[index] ?? '',
        ...(index === 0 && record.replyTo ? { replyTo: record.replyTo } : {}),
        ...(last && buttons ? { buttons } : {}),
        ...(last && content.file ? { file: content.file } : {}),
      };
      if (!(await store.claim(record.id, clock.now(), index))) {
        this.#claimedElsewhere(record);
        return;
      }
      faultPoint('outbox.after-claim');
      let sent: SentMessage | void;
      try {
        sent = await this.#callOnce('send', () =>
          connector.send(target, message, { key: `outbox-${record.id}-${index}` }),
        );
      } catch (error) {
        if (!this.#deps.running()) return;
        await this.#failure(record, attempts + 1, error);
        return;
      }
      faultPoint('outbox.after-send');
      // Settled even when the outbox is stopping: the part went out, so it must not count as interrupted.
      if (!last) {
        await store.recordProgress(record.id, index + 1, clock.now());
        attempts = 0;
        if (!this.#deps.running()) return;
      } else if (typeof sent?.ref === 'string') ref = sent.ref;
    }
    await store.markSent(record.id, clock.now(), ref);
    this.#count(record.channel, 'sent');
    logger.debug({ outboxId: record.id, target: record.targetKey, parts: parts.length }, 'outbound message delivered');
  }

  /**
   * Where `record` goes: its target, in the thread its `threadOf` message opened when the connector has threads, the
   * target names no thread of its own, and that message was delivered with a ref (else the conversation itself).
   */
  async #threadTarget(record: OutboxRecord, connector: Connector, target: ChannelTarget): Promise<ChannelTarget> {
    if (record.threadOf === null || !connector.threads || target.thread) return target;
    const ref = await this.#deps.store.sentRef(record.threadOf, record.targetKey);
    return ref ? { ...target, thread: ref } : target;
  }

  /**
   * The ref of the message `record` replaces, when it is to be delivered as an edit: it names an earlier keyed message
   * of the same conversation that was delivered with a ref, the connector can edit, no part went out as new yet, and
   * the message carries no file (an edit cannot add one).
   */
  async #editRef(record: OutboxRecord, connector: Connector): Promise<string | null> {
    if (record.replaces === null || record.partsSent > 0 || !connector.edit || record.file !== null) return null;
    return this.#deps.store.sentRef(record.replaces, record.targetKey);
  }

  /**
   * Delivers `record` as one edit of `ref`, claimed and settled like a send: 'done' (settled, a failure recorded for a
   * retry or a dead letter, or the outbox stopped) or 'refused' (the message can no longer be edited: send it anew).
   */
  async #edit(
    record: OutboxRecord,
    connector: Connector,
    target: ChannelTarget,
    ref: string,
    buttons: ChatButton[][] | undefined,
  ): Promise<'done' | 'refused'> {
    const { clock, logger, store } = this.#deps;
    const message: OutboundMessage = {
      text: fitOneMessage(record.text, connector.maxMessageLength),
      ...(buttons ? { buttons } : {}),
    };
    if (!(await store.claim(record.id, clock.now(), record.partsSent))) {
      this.#claimedElsewhere(record);
      return 'done';
    }
    faultPoint('outbox.after-claim');
    try {
      await this.#callOnce('edit', async () => {
        await connector.edit?.(target, ref, message);
      });
    } catch (error) {
      if (!this.#deps.running()) return 'done';
      if (error instanceof EditRefusedError) {
        logger.info(
          { outboxId: record.id, target: record.targetKey, err: error.message },
          'the message to replace can no longer be edited; sending the replacement as a new message',
        );
        // Nothing went out: the row is pending again, for the send that follows to claim.
        await store.unclaim(record.id, clock.now());
        return 'refused';
      }
      await this.#failure(record, record.attempts + 1, error);
      return 'done';
    }
    faultPoint('outbox.after-send');
    await store.markSent(record.id, clock.now(), ref);
    this.#count(record.channel, 'sent');
    logger.debug({ outboxId: record.id, target: record.targetKey }, 'outbound message delivered as an edit');
    return 'done';
  }

  /** One connector call (a send or an edit), bounded by `sendTimeoutMs` and abandoned when the outbox stops. */
  async #callOnce<T>(what: 'send' | 'edit', call: () => Promise<T>): Promise<T> {
    const { clock, config } = this.#deps;
    let timer: Timer | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = clock.after(config.sendTimeoutMs, () =>
        reject(new DeliveryError(`${what} timed out after ${config.sendTimeoutMs} ms`, { kind: 'transient' })),
      );
    });
    try {
      const outcome = await this.#deps.stopSignal().race(Promise.race([call(), timeout]));
      if (outcome.stopped) throw new Error('outbox stopped');
      return outcome.value;
    } finally {
      (timer as Timer | null)?.cancel();
    }
  }

  async #failure(record: OutboxRecord, attempts: number, error: unknown): Promise<void> {
    const { clock, config, logger } = this.#deps;
    const failure = classifyDeliveryFailure(error);
    if (!failure.retryable || attempts >= config.maxAttempts) {
      await this.deadLetter(record, attempts, failure.message);
      return;
    }
    const delay =
      failure.retryAfterMs ?? backoffDelay(attempts, config.baseDelayMs, config.maxDelayMs, this.#deps.random);
    const now = clock.now();
    await this.#deps.store.recordFailure(record.id, attempts, now + delay, failure.message, now);
    this.#count(record.channel, 'retried');
    logger.warn(
      { outboxId: record.id, target: record.targetKey, attempts, retryInMs: delay, err: failure.message },
      'outbound message not delivered; will retry',
    );
  }

  #count(channel: string, what: keyof ChannelCounts): void {
    this.totals[what] += 1;
    let perChannel = this.byChannel.get(channel);
    if (!perChannel) {
      perChannel = { sent: 0, retried: 0, failed: 0 };
      this.byChannel.set(channel, perChannel);
    }
    perChannel[what] += 1;
  }
}

import type { ChannelTarget, OutboundMessage, Outbox, SendOptions } from '../../src/channels/connector.ts';
import { formatTarget } from '../../src/channels/connector.ts';

/** One message handed to the outbox, with its target as a channel string. */
export interface RecordedMessage {
  to: string;
  text: string;
}

/** The same message with everything the sender gave: the parsed target and the message it replies to. */
export interface RecordedDelivery extends RecordedMessage {
  target: ChannelTarget;
  replyTo?: string;
  buttons?: OutboundMessage['buttons'];
  replaces?: string;
  threadOf?: string;
}

/** An Outbox that records every message in order instead of delivering it. */
export class RecordingOutbox implements Outbox {
  readonly sent: RecordedMessage[] = [];
  readonly deliveries: RecordedDelivery[] = [];
  #listeners: (() => void)[] = [];

  /** Idempotency keys seen so far: a second send under one key is dropped, as the durable outbox does. */
  readonly keys = new Set<string>();

  /**
   * Set to refuse every `fenced` send with this error, as a durable outbox whose lease fence fails (this node lost the
   * lease): nothing of such a send is recorded.
   */
  refuseFenced: Error | null = null;

  /** Records the message at the call (before the first await), as the durable outbox stores messages in call order. */
  async send(target: ChannelTarget, message: OutboundMessage, options: SendOptions = {}): Promise<void> {
    if (options.fenced && this.refuseFenced) throw this.refuseFenced;
    if (options.key !== undefined) {
      if (this.keys.has(options.key)) return;
      this.keys.add(options.key);
    }
    const to = formatTarget(target);
    this.sent.push({ to, text: message.text });
    this.deliveries.push({
      to,
      text: message.text,
      target,
      ...(message.replyTo ? { replyTo: message.replyTo } : {}),
      ...(message.buttons ? { buttons: message.buttons } : {}),
      ...(message.replaces ? { replaces: message.replaces } : {}),
      ...(message.threadOf ? { threadOf: message.threadOf } : {}),
    });
    for (const resolve of this.#listeners.splice(0)) resolve();
  }

  /** Texts sent to one channel string (`telegram|42`), in order. */
  to(channel: string): string[] {
    return this.sent.filter((m) => m.to === channel).map((m) => m.text);
  }

  /** Forgets what was recorded so far. */
  clear(): void {
    this.sent.length = 0;
    this.deliveries.length = 0;
  }

  /** Resolves once `count` messages were sent (counting from the last clear). */
  async waitFor(count: number): Promise<void> {
    while (this.sent.length < count) await new Promise<void>((resolve) => this.#listeners.push(resolve));
  }
}

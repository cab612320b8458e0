import type { ChannelTarget, OutboundMessage, Outbox } from '../../src/channels/connector.ts';
import { formatTarget } from '../../src/channels/connector.ts';

/** One message handed to the outbox. */
export interface SentMessage {
  target: ChannelTarget;
  channel: string;
  text: string;
  replyTo?: string;
}

/** An Outbox that records what it is given. */
export class RecordingOutbox implements Outbox {
  readonly sent: SentMessage[] = [];
  #listeners: (() => void)[] = [];

  send(target: ChannelTarget, message: OutboundMessage): void {
    this.sent.push({ target, channel: formatTarget(target), text: message.text, ...(message.replyTo ? { replyTo: message.replyTo } : {}) });
    for (const resolve of this.#listeners.splice(0)) resolve();
  }

  /** Texts sent to `channel`, in order. */
  textsTo(channel: string): string[] {
    return this.sent.filter((m) => m.channel === channel).map((m) => m.text);
  }

  /** Resolves once `count` messages were sent. */
  async waitFor(count: number): Promise<void> {
    while (this.sent.length < count) await new Promise<void>((resolve) => this.#listeners.push(resolve));
  }
}

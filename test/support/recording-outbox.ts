import type { ChannelTarget, OutboundMessage, Outbox } from '../../src/channels/connector.ts';
import { formatTarget } from '../../src/channels/connector.ts';

/** One message handed to the outbox, with its target as a channel string. */
export interface RecordedMessage {
  to: string;
  text: string;
}

/** An Outbox that records every message in order instead of delivering it. */
export class RecordingOutbox implements Outbox {
  readonly sent: RecordedMessage[] = [];

  send(target: ChannelTarget, message: OutboundMessage): void {
    this.sent.push({ to: formatTarget(target), text: message.text });
  }

  /** Texts sent to one channel string (`telegram|42`), in order. */
  to(channel: string): string[] {
    return this.sent.filter((m) => m.to === channel).map((m) => m.text);
  }

  /** Forgets what was recorded so far. */
  clear(): void {
    this.sent.length = 0;
  }
}

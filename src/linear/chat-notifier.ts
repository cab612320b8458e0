// The pipeline's notifications (stuck escalations, done summaries) on the user's chat channel through the Outbox:
// to `linear.pipeline.originChannel` when it names a chat, else to the top-level `fallbackChannel`. With neither, or no
// Outbox, each notification is logged clearly instead and nothing fails.
import type { ChannelTarget, Outbox } from '../channels/connector.ts';
import { formatTarget, parseTarget } from '../channels/connector.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { PipelineNotifier } from './pipeline/types.ts';

/** Where pipeline notifications go: originChannel when it parses as a chat target, else fallbackChannel, else null. */
export function pipelineNotifyTarget(
  config: Pick<Config, 'fallbackChannel'> & { linear: { pipeline: { originChannel: string } } },
): ChannelTarget | null {
  return parseTarget(config.linear.pipeline.originChannel) ?? parseTarget(config.fallbackChannel);
}

/** A PipelineNotifier over the Outbox (durable, retried delivery). */
export class OutboxNotifier implements PipelineNotifier {
  readonly target: ChannelTarget | null;
  #outbox: Outbox | undefined;
  #logger: Logger;

  constructor(deps: { config: Config; outbox?: Outbox; logger: Logger }) {
    this.target = pipelineNotifyTarget(deps.config);
    this.#outbox = deps.outbox;
    this.#logger = deps.logger;
    if (!this.target) {
      this.#logger.warn(
        { originChannel: deps.config.linear.pipeline.originChannel },
        'linear: pipeline notifications have no chat channel (set linear.pipeline.originChannel to a chat like telegram|<chat id>, or fallbackChannel); they will only be logged',
      );
    }
  }

  async notify(text: string): Promise<void> {
    await this.#send(text, 'stuck');
  }

  async done(text: string): Promise<void> {
    await this.#send(text, 'done');
  }

  async #send(text: string, kind: 'stuck' | 'done'): Promise<void> {
    if (!this.target || !this.#outbox) {
      this.#logger.warn(
        { kind, text, reason: this.target ? 'no chat connectors are running' : 'no chat channel configured' },
        'linear pipeline notification not delivered to chat',
      );
      return;
    }
    await this.#outbox.send(this.target, { text });
    this.#logger.info({ kind, to: formatTarget(this.target) }, 'linear pipeline notification sent to chat');
  }
}

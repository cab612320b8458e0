// The Slack connector's intake: Bolt listeners for a DM (`message.im`), a mention (`app_mention`), the slash command
// and a press of the connector's buttons (`block_actions`), each through the allow-list (users, and channels outside
// DMs) to the InboundHandler. A listener resolves only once the handler did (its event is acknowledged after); when the
// handler fails, an event Slack will deliver again is left unacknowledged, and on Slack's last try (or for a command or
// a press, which Slack never repeats) the person is told instead. Strangers are told their id and the key to add it.
import type { App, webApi } from '@slack/bolt';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { InboundHandler, InboundMessage } from '../connector.ts';
import { slackConfigKey } from './slack-credentials.ts';
import { describeSlackError } from './slack-errors.ts';
import type { SlackBlockActions, SlackCommand, SlackMessageEvent } from './slack-inbound.ts';
import {
  channelRefusalText,
  commandHelpText,
  commandToInbound,
  eventToInbound,
  isConversational,
  NOT_ACCEPTED_TEXT,
  pressToInbound,
  refusalText,
  slackBlockActionsSchema,
  slackCommandSchema,
  slackMessageEventSchema,
} from './slack-inbound.ts';

/** Slack's last retry of an unacknowledged event: after it the sender is told, since nothing will come again. */
const LAST_RETRY = 3;

/** What the intake needs from its connector. */
export interface SlackIntakeDeps {
  account: string | undefined;
  web: InstanceType<typeof webApi.WebClient>;
  clock: Clock;
  logger: Logger;
  allowedUsers: ReadonlySet<string>;
  allowedChannels: ReadonlySet<string>;
  /** The chat commands, listed to whoever sends the bare slash command. */
  commands: readonly { command: string; description: string }[];
  /** The app's own user id (its mention is removed from a mention's text). */
  botUserId: () => string | undefined;
}

/** The listeners of one connector. */
export class SlackIntake {
  #deps: SlackIntakeDeps;

  constructor(deps: SlackIntakeDeps) {
    this.#deps = deps;
  }

  /** Registers the listeners on `app`: messages and mentions, the slash command, button presses. */
  listen(app: App, onMessage: InboundHandler): void {
    const onEvent = async (args: { event: unknown; context: { retryNum?: number } }): Promise<void> => {
      const parsed = slackMessageEventSchema.safeParse(args.event);
      if (parsed.success && isConversational(parsed.data))
        await this.#event(parsed.data, args.context.retryNum ?? 0, onMessage);
    };
    app.event('message', onEvent);
    app.event('app_mention', onEvent);
    app.command(/^\/.+/, async ({ body, ack }) => {
      const parsed = slackCommandSchema.safeParse(body);
      if (!parsed.success) return ack();
      const answer = await this.#command(parsed.data, onMessage);
      await ack(answer === undefined ? undefined : { response_type: 'ephemeral', text: answer });
    });
    app.action({ type: 'block_actions' }, async ({ body }) => {
      const parsed = slackBlockActionsSchema.safeParse(body);
      if (parsed.success) await this.#press(parsed.data, onMessage);
    });
  }

  /** Whether the user (and, outside DMs, the channel) may talk to the app: undefined when allowed, else the refusal. */
  #refusal(userId: string, channel: string, direct: boolean): string | undefined {
    if (!this.#deps.allowedUsers.has(userId)) {
      this.#deps.logger.warn(
        { userId, chat: channel },
        `Slack user not on ${slackConfigKey(this.#deps.account)}.allowedUserIds refused`,
      );
      return refusalText(userId, this.#deps.account);
    }
    if (!direct && this.#deps.allowedChannels.size > 0 && !this.#deps.allowedChannels.has(channel)) {
      this.#deps.logger.warn(
        { userId, chat: channel },
        `Slack channel not on ${slackConfigKey(this.#deps.account)}.allowedChannels`,
      );
      return channelRefusalText(channel, this.#deps.account);
    }
    return undefined;
  }

  async #event(event: SlackMessageEvent, retryNum: number, onMessage: InboundHandler): Promise<void> {
    const user = event.user ?? '';
    const direct = event.channel_type === 'im';
    const refusal = this.#refusal(user, event.channel, direct);
    if (refusal) {
      await this.#tell(event.channel, user, refusal, direct, event.thread_ts);
      return;
    }
    const inbound = eventToInbound(event, this.#deps.account, this.#deps.botUserId(), this.#deps.clock.now());
    await this.#handOff(inbound, onMessage, retryNum >= LAST_RETRY, () =>
      this.#tell(event.channel, user, NOT_ACCEPTED_TEXT, direct, event.thread_ts),
    );
  }

  /** Returns the ephemeral answer to the command, or undefined when it was handed over. */
  async #command(command: SlackCommand, onMessage: InboundHandler): Promise<string | undefined> {
    const refusal = this.#refusal(command.user_id, command.channel_id, command.channel_id.startsWith('D'));
    if (refusal) return refusal;
    const inbound = commandToInbound(command, this.#deps.account, this.#deps.clock.now());
    if (!inbound) return commandHelpText(command.command, this.#deps.commands);
    let answer: string | undefined;
    await this.#handOff(inbound, onMessage, true, async () => {
      answer = NOT_ACCEPTED_TEXT;
    });
    return answer;
  }

  async #press(payload: SlackBlockActions, onMessage: InboundHandler): Promise<void> {
    const inbound = pressToInbound(payload, this.#deps.account, this.#deps.clock.now());
    if (!inbound) return;
    const chat = inbound.target.chat;
    const refusal = this.#refusal(inbound.userId, chat, chat.startsWith('D'));
    if (refusal) {
      await this.#tell(chat, inbound.userId, refusal, false, inbound.target.thread);
      return;
    }
    await this.#handOff(inbound, onMessage, true, () =>
      this.#tell(chat, inbound.userId, NOT_ACCEPTED_TEXT, false, inbound.target.thread),
    );
  }

  /**
   * Hands `inbound` to the handler. When it fails and Slack will deliver the event again, rethrows (the event stays
   * unacknowledged); on the last chance the sender is told instead and the event is acknowledged.
   */
  async #handOff(
    inbound: InboundMessage,
    onMessage: InboundHandler,
    lastChance: boolean,
    tell: () => Promise<void>,
  ): Promise<void> {
    try {
      await onMessage(inbound);
    } catch (error) {
      const err = error instanceof Error ? error.message : String(error);
      if (!lastChance) {
        this.#deps.logger.warn(
          { messageId: inbound.id, err },
          'inbound Slack message not accepted yet; Slack will retry',
        );
        throw error;
      }
      this.#deps.logger.error(
        { messageId: inbound.id, err },
        'inbound Slack message could not be accepted; the sender was told',
      );
      await tell();
    }
  }

  /** The connector's own reply: a message in a DM, else one only `user` sees (chat.postEphemeral). Logged on failure. */
  async #tell(channel: string, user: string, text: string, direct: boolean, thread: string | undefined): Promise<void> {
    try {
      const common = { channel, text, ...(thread ? { thread_ts: thread } : {}) };
      if (direct) await this.#deps.web.chat.postMessage(common);
      else await this.#deps.web.chat.postEphemeral({ ...common, user });
    } catch (error) {
      this.#deps.logger.warn({ err: describeSlackError(error), chat: channel }, 'could not reply on Slack');
    }
  }
}

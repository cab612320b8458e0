// The Discord connector's intake: each message or interaction through the channel filter and the allow-list to the
// InboundHandler (retried briefly, then the sender is told), one at a time per channel so a conversation keeps its
// order. An interaction is acknowledged only once the handler resolved: a slash command with a deferred reply (which
// the command's reply then fills), a button press with a deferred update. A stranger is told their id and the key
// that adds it (an ephemeral reply to an interaction), and nothing of theirs reaches the handler. The Gateway has no
// acknowledgement for a message: once the handler resolved it is durable, which is what the fault point marks.
import type { ButtonInteraction, ChatInputCommandInteraction, Interaction, Message } from 'discord.js';
import { MessageFlags, MessageType } from 'discord.js';
import type { Clock } from '../../core/clock.ts';
import { faultPoint } from '../../core/fault.ts';
import { KeyedSerial } from '../../core/keyed-serial.ts';
import type { Logger } from '../../core/logger.ts';
import type { InboundHandler } from '../connector.ts';
import { handOff } from '../hand-off.ts';
import type { StopSignal } from '../stop-signal.ts';
import { describeDiscordError } from './discord-errors.ts';
import type { InboundContext } from './discord-inbound.ts';
import {
  allowListKey,
  commandToInbound,
  messageToInbound,
  NOT_ACCEPTED_TEXT,
  pressToInbound,
  refusalText,
  TEXT_ONLY_TEXT,
} from './discord-inbound.ts';
import type { DiscordOutbound } from './discord-outbound.ts';
import type { PendingCommands } from './discord-pending.ts';

/** The fault point right after an inbound message or interaction was accepted (and acknowledged). */
export const AFTER_ACK_FAULT = 'discord.intake.after-ack';

/** What the intake needs from its connector. */
export interface DiscordIntakeDeps {
  clock: Clock;
  logger: Logger;
  outbound: DiscordOutbound;
  pending: PendingCommands;
  account?: string;
  allowedUsers: ReadonlySet<string>;
  /** Guild channels listened to (threads count by their channel); empty: all. DMs always count. */
  allowedChannels: ReadonlySet<string>;
  /** The bot's id and thread lookups; throws before the client is ready. */
  context(): InboundContext;
  /** Whether a channel is a thread the bot started (messages there need no mention). */
  ownThread(channelId: string): boolean;
  /** Attempts at handing one message over before the sender is told it could not be accepted. */
  maxAttempts: number;
  retryDelay(attempt: number): number;
  stopSignal(): StopSignal;
  running(): boolean;
}

/** Takes one connector's messages and interactions to its handler. */
export class DiscordIntake {
  #deps: DiscordIntakeDeps;
  /** The events of each channel, handled one after another. */
  readonly #channels = new KeyedSerial<string>();

  constructor(deps: DiscordIntakeDeps) {
    this.#deps = deps;
  }

  /** Queues a Gateway message (MESSAGE_CREATE) behind the earlier ones of its channel. */
  message(message: Message, onMessage: InboundHandler): void {
    this.#enqueue(message.channelId, () => this.#message(message, onMessage));
  }

  /** Queues an interaction (INTERACTION_CREATE) behind the earlier events of its channel. */
  interaction(interaction: Interaction, onMessage: InboundHandler): void {
    if (interaction.isChatInputCommand())
      this.#enqueue(interaction.channelId, () => this.#command(interaction, onMessage));
    else if (interaction.isButton()) this.#enqueue(interaction.channelId, () => this.#press(interaction, onMessage));
  }

  /** Resolves once every queued event was handled. */
  async idle(): Promise<void> {
    await this.#channels.idle();
  }

  #enqueue(channelId: string, work: () => Promise<void>): void {
    this.#channels
      .run(channelId, work)
      .catch((error: unknown) =>
        this.#deps.logger.error({ err: describeDiscordError(error), chat: channelId }, 'Discord event not handled'),
      );
  }

  /** True when the channel (or the channel a thread is in) is listened to; DMs always are. */
  #listened(channelId: string, inGuild: boolean): boolean {
    const { allowedChannels } = this.#deps;
    if (!inGuild || allowedChannels.size === 0) return true;
    const parent = this.#deps.context().threadParent(channelId);
    return allowedChannels.has(channelId) || (parent !== undefined && allowedChannels.has(parent));
  }

  async #message(message: Message, onMessage: InboundHandler): Promise<void> {
    const context = this.#deps.context();
    if (message.author.bot || message.author.id === context.botId) return;
    if (message.type !== MessageType.Default && message.type !== MessageType.Reply) return;
    const inGuild = message.guildId !== null;
    if (!this.#listened(message.channelId, inGuild)) return;
    // In a guild channel only what is said to the bot counts: a mention, a command, or a message in its own thread.
    const addressed =
      !inGuild ||
      message.mentions.users.has(context.botId) ||
      message.content.trimStart().startsWith('/') ||
      this.#deps.ownThread(message.channelId);
    if (!addressed) return;
    const { logger, outbound } = this.#deps;
    if (!this.#deps.allowedUsers.has(message.author.id)) {
      logger.warn(
        { userId: message.author.id, chat: message.channelId },
        `message from a user not on ${allowListKey(this.#deps.account)} refused`,
      );
      await outbound.replyDirect(message.channelId, refusalText(message.author.id, this.#deps.account), message.id);
      return;
    }
    const inbound = messageToInbound(message, context);
    if (inbound.target.thread) outbound.knowThread(inbound.target.thread);
    if (inbound.text === '') {
      await outbound.replyDirect(message.channelId, TEXT_ONLY_TEXT, message.id);
      return;
    }
    const outcome = await handOff(inbound, onMessage, this.#deps);
    if (outcome === 'given-up') await outbound.replyDirect(message.channelId, NOT_ACCEPTED_TEXT, message.id);
    if (outcome === 'accepted') faultPoint(AFTER_ACK_FAULT);
  }

  async #command(interaction: ChatInputCommandInteraction, onMessage: InboundHandler): Promise<void> {
    if (!(await this.#admit(interaction))) return;
    const inbound = commandToInbound(interaction, this.#deps.context());
    const { pending } = this.#deps;
    pending.open(inbound.id, {
      applicationId: interaction.applicationId,
      token: interaction.token,
      channelId: interaction.channelId,
    });
    const outcome = await handOff(inbound, onMessage, this.#deps);
    if (outcome !== 'accepted') {
      pending.settle(inbound.id, false);
      if (outcome === 'given-up') await this.#ephemeral(interaction, NOT_ACCEPTED_TEXT);
      return;
    }
    try {
      await interaction.deferReply();
      pending.settle(inbound.id, true);
    } catch (error) {
      pending.settle(inbound.id, false);
      this.#deps.logger.warn({ err: describeDiscordError(error) }, 'could not acknowledge a slash command');
    }
    faultPoint(AFTER_ACK_FAULT);
  }

  async #press(interaction: ButtonInteraction, onMessage: InboundHandler): Promise<void> {
    if (!(await this.#admit(interaction))) return;
    const outcome = await handOff(pressToInbound(interaction, this.#deps.context()), onMessage, this.#deps);
    if (outcome === 'stopped') return;
    if (outcome === 'given-up') {
      await this.#ephemeral(interaction, '⚠️ Your press could not be accepted. Please press the button again.');
      return;
    }
    try {
      await interaction.deferUpdate();
    } catch (error) {
      this.#deps.logger.warn({ err: describeDiscordError(error) }, 'could not acknowledge a button press');
    }
    faultPoint(AFTER_ACK_FAULT);
  }

  /** The channel filter and the allow-list of an interaction; refusals are answered (ephemeral) here. */
  async #admit(interaction: ChatInputCommandInteraction | ButtonInteraction): Promise<boolean> {
    if (!this.#listened(interaction.channelId, interaction.guildId !== null)) {
      await this.#ephemeral(interaction, 'This bot does not listen in this channel.');
      return false;
    }
    if (this.#deps.allowedUsers.has(interaction.user.id)) return true;
    this.#deps.logger.warn(
      { userId: interaction.user.id, chat: interaction.channelId, kind: interaction.isButton() ? 'press' : 'command' },
      `interaction from a user not on ${allowListKey(this.#deps.account)} refused`,
    );
    await this.#ephemeral(interaction, refusalText(interaction.user.id, this.#deps.account));
    return false;
  }

  async #ephemeral(interaction: ChatInputCommandInteraction | ButtonInteraction, text: string): Promise<void> {
    try {
      await interaction.reply({ content: text, flags: MessageFlags.Ephemeral });
    } catch (error) {
      this.#deps.logger.warn({ err: describeDiscordError(error) }, 'could not answer an interaction');
    }
  }
}

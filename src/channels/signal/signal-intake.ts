// The Signal connector's intake: one event of signal-cli's stream at a time, through the allow-list, a numbered reply
// turned into the command it stands for, to the InboundHandler (retried with backoff, then the sender is told). The
// stream has no acknowledgement: "acknowledged" here means the event's id is recorded as handled (SignalState), which
// happens only after the handler resolved; a message cut off before that is replayed on reconnect (Last-Event-ID) and
// deduplicated (here for this run, by the handler's durable stores across restarts).
import type { Clock } from '../../core/clock.ts';
import { faultPoint } from '../../core/fault.ts';
import type { Logger } from '../../core/logger.ts';
import type { ChannelTarget, InboundHandler, InboundMessage } from '../connector.ts';
import { handOff } from '../hand-off.ts';
import type { StopSignal } from '../stop-signal.ts';
import type { SignalIncoming } from './signal-inbound.ts';
import {
  GROUP_PREFIX,
  NOT_ACCEPTED_TEXT,
  parseReceive,
  recipientOf,
  refusalText,
  TEXT_ONLY_TEXT,
} from './signal-inbound.ts';
import { menuCommand } from './signal-menus.ts';
import type { SignalRpc } from './signal-rpc.ts';
import type { SignalState } from './signal-state.ts';
import type { SseEvent } from './sse-reader.ts';

/** How many handled message ids the intake remembers to drop a replay within one run (signal-cli keeps 1000 events). */
const RECENT_IDS = 2_000;

/** What the intake needs from its connector. */
export interface SignalIntakeDeps {
  clock: Clock;
  logger: Logger;
  rpc: SignalRpc;
  state: SignalState;
  /** The connector's account name (absent for the default one): set on every inbound target. */
  account: string | undefined;
  /** Numbers (or service ids) allowed to talk to the bot. */
  allowed: ReadonlySet<string>;
  /** Attempts at handing one message over before the sender is told it could not be accepted. */
  maxAttempts: number;
  /** The current run's stop signal (a hand-off in flight is abandoned when it fires). */
  stopSignal: () => StopSignal;
  /** How long to wait before hand-off attempt `attempt + 1`. */
  retryDelay: (attempt: number) => number;
}

/** Handles the events of one account's stream. */
export class SignalIntake {
  #deps: SignalIntakeDeps;
  #recent = new Set<string>();

  constructor(deps: SignalIntakeDeps) {
    this.#deps = deps;
  }

  /** Handles one event; true when it is done with (its id recorded as handled), false when stopped before that. */
  async handle(event: SseEvent, onMessage: InboundHandler): Promise<boolean> {
    const incoming = event.event === 'receive' ? parseReceive(event.data) : null;
    if (incoming) {
      if (this.#recent.has(incoming.id)) {
        this.#deps.logger.debug({ messageId: incoming.id }, 'Signal message delivered again; already handled');
      } else {
        const done = await this.#message(incoming, onMessage);
        if (!done) return false;
        this.#remember(incoming.id);
      }
    }
    await this.#deps.state.handled(event.id, incoming !== null);
    if (incoming) faultPoint('signal.after-accept');
    return true;
  }

  async #message(incoming: SignalIncoming, onMessage: InboundHandler): Promise<boolean> {
    const { logger, state } = this.#deps;
    const target = this.#target(incoming.chat);
    if (!this.#deps.allowed.has(incoming.sender)) {
      const inGroup = incoming.chat.startsWith(GROUP_PREFIX);
      // In a group, only what is addressed to the bot (a command, a number of its list) gets the refusal.
      const addressed =
        !inGroup ||
        incoming.text.trimStart().startsWith('/') ||
        !!menuCommand(state.menus, incoming.chat, incoming.text);
      logger.warn(
        { sender: incoming.sender, chat: incoming.chat, replied: addressed },
        'Signal message from a number not on allowedNumbers refused',
      );
      if (addressed) await this.#reply(target, refusalText(incoming.sender, this.#deps.account));
      return true;
    }
    if (!incoming.text.trim()) {
      await this.#reply(target, TEXT_ONLY_TEXT);
      return true;
    }
    const outcome = await handOff(this.#inbound(incoming, target), onMessage, this.#deps);
    if (outcome === 'given-up') await this.#reply(target, NOT_ACCEPTED_TEXT);
    return outcome !== 'stopped';
  }

  #target(chat: string): ChannelTarget {
    return { channel: 'signal', ...(this.#deps.account ? { account: this.#deps.account } : {}), chat };
  }

  /** The InboundMessage of an allowed sender's text; a number of the conversation's list becomes its command. */
  #inbound(incoming: SignalIncoming, target: ChannelTarget): InboundMessage {
    const command = menuCommand(this.#deps.state.menus, incoming.chat, incoming.text);
    const account = this.#deps.account;
    return {
      // A named account's ids carry it: two numbers in one group receive the same message.
      id: account ? `${account}:${incoming.id}` : incoming.id,
      target,
      userId: incoming.sender,
      ...(incoming.senderName ? { userName: incoming.senderName } : {}),
      text: command ?? incoming.text,
      receivedAt: this.#deps.clock.now(),
      ...(command ? { pressed: true } : {}),
    };
  }

  /** A reply the connector gives itself (refusals, notices): sent at once, failures only logged. */
  async #reply(target: ChannelTarget, text: string): Promise<void> {
    try {
      await this.#deps.rpc.send(recipientOf(target), text);
    } catch (error) {
      this.#deps.logger.warn(
        { chat: target.chat, err: error instanceof Error ? error.message : String(error) },
        'could not send a Signal notice',
      );
    }
  }

  #remember(id: string): void {
    this.#recent.add(id);
    if (this.#recent.size <= RECENT_IDS) return;
    const oldest = this.#recent.values().next();
    if (!oldest.done) this.#recent.delete(oldest.value);
  }
}

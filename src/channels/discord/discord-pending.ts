// Slash commands whose deferred response ("<bot> is thinking…") is still to be filled: the connector's reply to such
// a command edits that response instead of posting a new message. Held in memory only: after a restart, or once
// Discord's 15 minutes for an interaction token have passed, the reply goes to the channel as a new message.
import type { Clock } from '../../core/clock.ts';

/** How long Discord accepts an interaction token for follow-ups and edits of the original response. */
export const INTERACTION_TOKEN_MS = 15 * 60_000;

/** One deferred slash command. */
export interface PendingCommand {
  applicationId: string;
  token: string;
  /** The channel the response is in. */
  channelId: string;
  openedAt: number;
  /** Resolves true once the response was deferred, false when it never will be. */
  acked: Promise<boolean>;
}

interface Entry extends PendingCommand {
  settle(acked: boolean): void;
  /** Set once a reply took it (the reply may come before the deferral: it waits on `acked`). */
  taken: boolean;
}

/** The deferred slash commands of one connector, by inbound message id. */
export class PendingCommands {
  #clock: Clock;
  #entries = new Map<string, Entry>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Records a command being handed over; `settle` it once it is deferred (or not). */
  open(inboundId: string, command: Omit<PendingCommand, 'openedAt' | 'acked'>): void {
    this.#prune();
    let settle: (acked: boolean) => void = () => {};
    const acked = new Promise<boolean>((resolve) => (settle = resolve));
    this.#entries.set(inboundId, { ...command, openedAt: this.#clock.now(), acked, settle, taken: false });
  }

  /** Says whether the command's response was deferred; a command never deferred is forgotten. */
  settle(inboundId: string, acked: boolean): void {
    const entry = this.#entries.get(inboundId);
    entry?.settle(acked);
    if (!acked) this.#entries.delete(inboundId);
  }

  /** Takes the command a reply answers (once): undefined when unknown, already answered or expired. */
  take(inboundId: string): PendingCommand | undefined {
    const entry = this.#entries.get(inboundId);
    if (!entry || entry.taken || !this.#fresh(entry)) return undefined;
    entry.taken = true;
    return entry;
  }

  /** Settles every open command as not deferred (the connector stops). */
  clear(): void {
    for (const entry of this.#entries.values()) entry.settle(false);
    this.#entries.clear();
  }

  #fresh(entry: Entry): boolean {
    // A minute of margin: the edit itself takes time, and Discord's clock is not ours.
    return this.#clock.now() - entry.openedAt < INTERACTION_TOKEN_MS - 60_000;
  }

  #prune(): void {
    for (const [id, entry] of this.#entries) if (!this.#fresh(entry)) this.#entries.delete(id);
  }
}

// The web chats' changes across the nodes of a cluster (PostgreSQL). Every node serves the web page, but a chat's
// transcript is written by whichever node takes the page's message (its own gateway) or delivers the reply (the
// `primary` holder's outbox). A node with pages open on a chat reads what changed in it from the database, in version
// order, whenever a change is announced (NOTIFY `switchboard_web` with the chat id, sent in the writing transaction),
// when the LISTEN connection comes back, and every `pollMs` (a lost notification only delays a change). Its own
// changes are read back the same way, so every page of a chat sees every change once and in version order: versions
// are taken under the counter row's lock and commit in order, so a read after version v committed misses none below v.
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import type { Notices } from '../../core/notices.ts';
import { followChannel } from '../../core/notices.ts';
import type { WebMessage } from '../../store/web-transcript.ts';
import { WEB_CHANGES_CHANNEL } from '../../store/web-transcript.ts';

/** What the fan-out reads: the chat's newest version and what changed after a version (store/web-transcript.ts). */
export interface ChatChanges {
  latestVersion(chatId: string): Promise<number>;
  changedAfter(chatId: string, version: number): Promise<WebMessage[]>;
}

/** How a ChatFanout is built. */
export interface ChatFanoutOptions {
  notices: Notices;
  changes: ChatChanges;
  /** Hands a change to the pages of its chat open on this node. */
  deliver: (message: WebMessage) => void;
  clock: Clock;
  logger: Logger;
  pollMs: number;
}

/** A chat followed on this node: the newest version its pages were given, and the read in progress. */
interface Followed {
  seen: number;
  ready: Promise<void>;
  reading: Promise<void> | null;
  again: boolean;
}

/** Reads the changes of the chats followed on this node from the database and hands them to their pages. */
export class ChatFanout {
  readonly #o: ChatFanoutOptions;
  readonly #chats = new Map<string, Followed>();
  #stopFollowing: (() => void) | null = null;

  constructor(options: ChatFanoutOptions) {
    this.#o = options;
  }

  /** Listens for announced changes and starts the poll. */
  start(): void {
    if (this.#stopFollowing) return;
    const { notices, clock, pollMs } = this.#o;
    this.#stopFollowing = followChannel(
      notices,
      WEB_CHANGES_CHANNEL,
      { notice: (chatId) => this.changed(chatId), all: () => this.#changedAll() },
      clock,
      pollMs,
    );
  }

  /** Stops listening and polling, and forgets the followed chats. */
  stop(): void {
    this.#stopFollowing?.();
    this.#stopFollowing = null;
    this.#chats.clear();
  }

  /**
   * Starts following `chatId` (once per chat; call before reading the history a page starts from): resolves once the
   * chat's newest version is known, so changes committed after it are handed over and earlier ones are in that history.
   */
  async follow(chatId: string): Promise<void> {
    let chat = this.#chats.get(chatId);
    if (!chat) {
      const created: Followed = { seen: 0, ready: Promise.resolve(), reading: null, again: false };
      created.ready = this.#o.changes.latestVersion(chatId).then(
        (version) => {
          created.seen = Math.max(created.seen, version);
        },
        (error: unknown) => {
          if (this.#chats.get(chatId) === created) this.#chats.delete(chatId);
          throw error;
        },
      );
      this.#chats.set(chatId, created);
      chat = created;
    }
    await chat.ready;
  }

  /** Stops following `chatId` (its last page went away). */
  unfollow(chatId: string): void {
    this.#chats.delete(chatId);
  }

  /** Says chat `chatId` changed (here or on another node): its pages get what changed, in order. */
  changed(chatId: string): void {
    const chat = this.#chats.get(chatId);
    if (!chat) return;
    if (chat.reading) {
      chat.again = true;
      return;
    }
    chat.reading = this.#read(chatId, chat)
      .catch((error: unknown) =>
        this.#o.logger.warn({ err: error, chat: chatId }, 'could not read the web chat changes; the poll tries again'),
      )
      .finally(() => {
        chat.reading = null;
      });
  }

  /** Waits for the reads in progress (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const reading = [...this.#chats.values()].flatMap((c) => (c.reading ? [c.reading] : []));
      if (reading.length === 0) return;
      await Promise.all(reading);
    }
  }

  #changedAll(): void {
    for (const chatId of this.#chats.keys()) this.changed(chatId);
  }

  async #read(chatId: string, chat: Followed): Promise<void> {
    await chat.ready;
    do {
      chat.again = false;
      const rows = await this.#o.changes.changedAfter(chatId, chat.seen);
      for (const row of rows) {
        if (row.version <= chat.seen || this.#chats.get(chatId) !== chat) continue;
        chat.seen = row.version;
        this.#o.deliver(row);
      }
    } while (chat.again && this.#chats.get(chatId) === chat);
  }
}

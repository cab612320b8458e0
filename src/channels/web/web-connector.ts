// The web page as a chat connector: each browser keeps a chat id; what it sends goes to the inbound handler, what the
// daemon sends to `web|<chatId>` lands in that chat's durable transcript and is pushed to every page open on it.
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { WebChannelConfig } from '../../core/config-channels.ts';
import { AppError, conflict, errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { Notices } from '../../core/notices.ts';
import type { Database } from '../../store/tables/index.ts';
import type { WebMessage } from '../../store/web-transcript.ts';
import { WebTranscriptStore } from '../../store/web-transcript.ts';
import type {
  ChannelTarget,
  Connector,
  DeliveryKey,
  InboundHandler,
  OutboundMessage,
  SentMessage,
} from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { EditRefusedError } from '../outbox-edit.ts';
import { ChatFanout } from './web-chat-fanout.ts';
import { chatIdSchema, inboundMessageId, WEB_CHANNEL, WEB_USER_ID } from './web-ids.ts';

export interface WebConnectorDeps {
  /** The daemon's database (migration 250 applied): `sqliteKysely(db)`, or PostgreSQL. */
  db: Kysely<Database>;
  /** `config.channels.web`. */
  config: WebChannelConfig;
  clock: Clock;
  logger: Logger;
}

/**
 * What a page sent: its own message id (the same on a retry) and the text; `pressed` when the text is the command of a
 * button the person pressed (passed on as `InboundMessage.pressed`).
 */
export interface PageMessage {
  id: string;
  text: string;
  pressed?: boolean;
}

/** The outcome of `accept`: the transcript row, and whether this id had already been accepted. */
export interface AcceptResult {
  duplicate: boolean;
  message: WebMessage;
}

/** A page following a chat: told of every change, and told when the connector stops. */
export interface ChatWatcher {
  onMessage(message: WebMessage): void;
  onClose(): void;
}

/** The messages a page starts from, and the handle that stops the live feed. */
export interface ChatFeed {
  history: WebMessage[];
  close(): void;
}

/** A refusal the outbox never retries. */
function refuse(reason: string): DeliveryError {
  return new DeliveryError(reason, { kind: 'permanent' });
}

/** The web chat connector (channel `web`). Build it at start (src/daemon/chat.ts), register it with the outbox, then `start()` it. */
export class WebConnector implements Connector {
  readonly channel = WEB_CHANNEL;
  readonly maxMessageLength: number;
  /** The transcript keeps each delivery key: a repeated send appends nothing. */
  readonly idempotent = true;
  #deps: WebConnectorDeps;
  #store: WebTranscriptStore;
  #handler: InboundHandler | null = null;
  #watchers = new Map<string, Set<ChatWatcher>>();
  #inFlight = new Map<string, Promise<AcceptResult>>();
  /** Set by `share` (a cluster on PostgreSQL): pages get every chat change from the database, whoever wrote it. */
  #fanout: ChatFanout | null = null;

  constructor(deps: WebConnectorDeps) {
    this.#deps = deps;
    this.maxMessageLength = deps.config.maxMessageLength;
    this.#store = new WebTranscriptStore(deps.db, deps.config.transcriptMaxMessages);
  }

  /** True between `start()` and `stop()`. */
  get running(): boolean {
    return this.#handler !== null;
  }

  /**
   * Shares the chats with the other nodes of a cluster (PostgreSQL; call before `start`): every change is announced on
   * `notices`' channel `switchboard_web`, and the pages open here are given the changes other nodes write (replies
   * delivered by the `primary` holder, messages sent from other nodes' pages), read from the database on each notice,
   * on reconnect and every `pollMs`. `notify: false` only where there is no NOTIFY (tests on SQLite).
   */
  share(notices: Notices, options: { pollMs?: number; notify?: boolean } = {}): void {
    const { db, config, clock, logger } = this.#deps;
    const pollMs = options.pollMs ?? 2000;
    this.#store = new WebTranscriptStore(db, config.transcriptMaxMessages, { notify: options.notify ?? true });
    this.#fanout = new ChatFanout({
      notices,
      changes: this.#store,
      deliver: (message) => this.#deliverToPages(message),
      clock,
      logger,
      pollMs,
    });
  }

  /** Waits until the shared chats' changes read so far were handed to the pages (tests). */
  async idle(): Promise<void> {
    await this.#fanout?.idle();
  }

  /** Starts taking page messages; each goes to `onMessage`. */
  async start(onMessage: InboundHandler): Promise<void> {
    this.#handler = onMessage;
    this.#fanout?.start();
  }

  /**
   * Appends a daemon message, with its buttons, to the chat's transcript (committed before this resolves) and pushes it
   * to the pages open on that chat; resolves to its `ref` (its transcript position), which `edit` names. A send under
   * a `delivery.key` already in the transcript appends (and pushes) nothing and resolves to the first send's ref.
   * Throws a permanent DeliveryError (never retried by the outbox) for a target that is not a web chat or a text over
   * the limit.
   */
  async send(target: ChannelTarget, message: OutboundMessage, delivery?: DeliveryKey): Promise<SentMessage> {
    const chat = this.#chatOf(target);
    this.#checkLength(message);
    const added = await this.#store.addAgentMessage(
      chat,
      message.text,
      message.replyTo ?? null,
      this.#deps.clock.now(),
      delivery?.key ?? null,
      message.buttons ?? null,
    );
    const ref = { ref: String(added.message.pos) };
    if (added.duplicate) {
      this.#deps.logger.info(
        { chat, key: delivery?.key },
        'web message already in the transcript under its delivery key; not added again',
      );
      return ref;
    }
    this.#publish(added.message);
    return ref;
  }

  /**
   * Replaces the text and buttons (none when `message.buttons` is absent) of the daemon message `ref` (from `send`) in
   * the target chat, committed before this resolves, and pushes the changed message to the pages open on it (which
   * redraw it in place). Repeating an edit changes nothing. Throws EditRefusedError (the outbox then sends the
   * replacement as a new message) for a ref that names no daemon message of that chat (or one trimmed away), and a
   * permanent DeliveryError for a target that is not a web chat or a text over the limit.
   */
  async edit(target: ChannelTarget, ref: string, message: OutboundMessage): Promise<void> {
    const chat = this.#chatOf(target);
    this.#checkLength(message);
    if (!/^\d{1,15}$/.test(ref)) throw new EditRefusedError(`ref: "${ref}" is not a web message position`);
    const edited = await this.#store.editAgentMessage(
      chat,
      Number(ref),
      message.text,
      message.buttons ?? null,
      this.#deps.clock.now(),
    );
    if (!edited) {
      throw new EditRefusedError(`ref: chat ${chat} has no daemon message ${ref} (never sent there, or trimmed away)`);
    }
    if (edited.changed) this.#publish(edited.message);
  }

  #chatOf(target: ChannelTarget): string {
    if (target.channel !== WEB_CHANNEL)
      throw refuse(`target.channel: the web connector cannot send to "${target.channel}"`);
    if (target.account || target.thread) throw refuse('target: web chats have no accounts or threads');
    const chat = chatIdSchema.safeParse(target.chat);
    if (!chat.success) throw refuse(`target.chat: ${chat.error.issues[0]?.message ?? 'invalid chat id'}`);
    return chat.data;
  }

  #checkLength(message: OutboundMessage): void {
    if (message.text.length > this.maxMessageLength) {
      throw refuse(`text: ${message.text.length} characters, over the web limit of ${this.maxMessageLength}`);
    }
  }

  /** Stops taking page messages and closes every open feed. */
  async stop(): Promise<void> {
    this.#handler = null;
    this.#fanout?.stop();
    const watchers = [...this.#watchers.values()].flatMap((set) => [...set]);
    this.#watchers.clear();
    for (const watcher of watchers) watcher.onClose();
  }

  /**
   * Takes a message a page sent to chat `chatId` (already validated: see web-ids.ts). The message is written to the
   * transcript as `pending` and shown at once, then handed to the inbound handler; resolves once the handler has
   * accepted it (status `accepted`). The same page id is handed over once: a retry of an accepted message resolves as
   * a duplicate, a retry while the first is in flight waits for it, a retry after a failure tries again. Throws an
   * `unavailable` AppError when the connector is not running or the handler failed (the row is then `failed`), and a
   * `conflict` AppError when the id was already used for another text.
   */
  async accept(chatId: string, input: PageMessage): Promise<AcceptResult> {
    const key = `${chatId}\n${input.id}`;
    const inFlight = this.#inFlight.get(key);
    if (inFlight) return { ...(await inFlight), duplicate: true };
    // In flight from here on (before the first await), so a retry arriving while the transcript is read waits too.
    const acceptance = this.#accept(chatId, input);
    this.#inFlight.set(key, acceptance);
    try {
      return await acceptance;
    } finally {
      this.#inFlight.delete(key);
    }
  }

  async #accept(chatId: string, input: PageMessage): Promise<AcceptResult> {
    const existing = await this.#store.byClientId(chatId, input.id);
    if (existing && existing.text !== input.text)
      throw conflict(`id: message ${input.id} was already sent with another text`);
    if (existing?.status === 'accepted') return { duplicate: true, message: existing };
    const handler = this.#handler;
    if (!handler)
      throw new AppError(
        'unavailable',
        'the web chat is not running (the daemon is starting or stopping); try again shortly',
      );
    const now = this.#deps.clock.now();
    let row: WebMessage;
    if (!existing) {
      row = await this.#store.addUserMessage(chatId, input.id, input.text, now);
      this.#publish(row);
    } else {
      // A retry after a failure, or of a message left pending by a crash: the handler deduplicates by message id.
      row = existing.status === 'pending' ? existing : await this.#update(existing.pos, 'pending', null);
    }
    return this.#deliver(handler, row, input.pressed === true);
  }

  /**
   * Follows a chat: resolves to the messages the page is missing — the last `historyLimit` ones when `afterVersion` is
   * null (a fresh page), else every change after that version (a reconnect) — and calls `watcher` for every later
   * change. The watcher is subscribed before the history is read (at the call), so nothing is lost in between; a
   * change committed while the history is read may reach the watcher (even before this resolves) and be in `history`
   * too: the caller skips versions it already has (see web-chat-stream.ts). Call `close()` when the page goes away.
   */
  async follow(chatId: string, afterVersion: number | null, watcher: ChatWatcher): Promise<ChatFeed> {
    let set = this.#watchers.get(chatId);
    if (!set) {
      set = new Set();
      this.#watchers.set(chatId, set);
    }
    set.add(watcher);
    const close = (): void => {
      const current = this.#watchers.get(chatId);
      current?.delete(watcher);
      if (current?.size === 0) {
        this.#watchers.delete(chatId);
        this.#fanout?.unfollow(chatId);
      }
    };
    try {
      await this.#fanout?.follow(chatId);
      const history =
        afterVersion === null
          ? await this.#store.recent(chatId, this.#deps.config.historyLimit)
          : await this.#store.changedAfter(chatId, afterVersion);
      return { history, close };
    } catch (error) {
      close();
      throw error;
    }
  }

  async #deliver(handler: InboundHandler, row: WebMessage, pressed: boolean): Promise<AcceptResult> {
    try {
      await handler({
        id: inboundMessageId(row.chatId, row.clientId ?? String(row.pos)),
        target: { channel: WEB_CHANNEL, chat: row.chatId },
        userId: WEB_USER_ID,
        text: row.text,
        receivedAt: row.createdAt,
        ...(pressed ? { pressed: true } : {}),
      });
    } catch (error) {
      const reason = errorMessage(error);
      this.#deps.logger.warn({ err: error, chat: row.chatId, clientId: row.clientId }, 'web message not accepted');
      await this.#update(row.pos, 'failed', reason);
      throw new AppError('unavailable', `the message could not be accepted: ${reason}; send it again to retry`);
    }
    return { duplicate: false, message: await this.#update(row.pos, 'accepted', null) };
  }

  async #update(pos: number, status: WebMessage['status'], error: string | null): Promise<WebMessage> {
    const row = await this.#store.setStatus(pos, status, error, this.#deps.clock.now());
    this.#publish(row);
    return row;
  }

  /** Hands a change this node committed to the pages (through the database when shared, so all see one order). */
  #publish(message: WebMessage): void {
    if (this.#fanout) this.#fanout.changed(message.chatId);
    else this.#deliverToPages(message);
  }

  #deliverToPages(message: WebMessage): void {
    for (const watcher of this.#watchers.get(message.chatId) ?? []) {
      try {
        watcher.onMessage(message);
      } catch (error) {
        this.#deps.logger.error({ err: error, chat: message.chatId }, 'web chat watcher failed');
      }
    }
  }
}

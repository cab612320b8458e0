// A fake Telegram Bot API on 127.0.0.1 speaking the real wire format at /bot<token>/<method> (JSON, urlencoded and
// multipart bodies, or query parameters): getMe, deleteWebhook, getWebhookInfo, getUpdates (long polling with
// `timeout`, `offset` confirming earlier updates, `allowed_updates`, 409 when a newer poll replaces a pending one),
// sendMessage (MarkdownV2 checked like Telegram does, see fake-telegram-markdown.ts; inline keyboards checked, see
// fake-telegram-keyboards.ts), sendDocument (a multipart upload, caption checked; see fake-telegram-documents.ts; the
// file's name and bytes kept on the sent message), editMessageText (the message changed in place; "message is not modified" and "message to
// edit not found" as Telegram answers them), answerCallbackQuery (once per press), setMyCommands, sendChatAction.
// Tests push user messages and button presses, read and await what the bot sent, script failures (429 with
// retry_after, 500, 409, any 4xx) and look at the offsets the bot confirmed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadDocument, SentDocument } from './fake-telegram-documents.ts';
import { readDocument } from './fake-telegram-documents.ts';
import type { FakeButton } from './fake-telegram-keyboards.ts';
import { callbackQuery, parseInlineKeyboard } from './fake-telegram-keyboards.ts';
import type { ReadText, SentMessage } from './fake-telegram-messages.ts';
import { chatObject, messageObject, readText } from './fake-telegram-messages.ts';
import type { FakeFailure, Params } from './fake-telegram-wire.ts';
import { descriptionFor, readParams } from './fake-telegram-wire.ts';

export type { FakeButton, FakeFailure, SentDocument, SentMessage };

export const FAKE_BOT_TOKEN = '123456789:AAFakeTokenForTestsOnly_0123456789abc';

/** One update as Telegram serializes it (only the kinds the fake produces). */
export interface FakeUpdate {
  update_id: number;
  message?: Record<string, unknown>;
  [kind: string]: unknown;
}

/** An editMessageText the fake applied. */
export interface FakeEdit {
  chatId: string;
  messageId: number;
  /** The new text a user sees. */
  text: string;
  parseMode: string | undefined;
  keyboard: FakeButton[][] | undefined;
}

/** An answerCallbackQuery the bot made. */
export interface CallbackAnswer {
  queryId: string;
  text: string | undefined;
  showAlert: boolean;
}

/** Options of a press. */
export interface PressOptions {
  firstName?: string;
  username?: string;
}

/** A user message to push as an update. */
export interface PushedMessage {
  fromId: number;
  text: string;
  /** Default: the sender's private chat (same id as `fromId`). */
  chatId?: number;
  /** A forum topic id: sets message_thread_id and is_topic_message. */
  threadId?: number;
  firstName?: string;
  username?: string;
}

interface Waiter {
  res: ServerResponse;
  limit: number;
  timer: NodeJS.Timeout;
}

/** The fake server. Create it with `startFakeTelegram()`. */
export class FakeTelegram {
  readonly token: string;
  /** The `apiRoot` to give grammY, e.g. http://127.0.0.1:40123 */
  url = '';
  /** Every message the bot sent, in order. */
  readonly sent: SentMessage[] = [];
  /** Every call, in order: method name (as in the path) and its parameters. */
  readonly requests: { method: string; params: Params }[] = [];
  /** Every `offset` the bot passed to getUpdates, in order. */
  readonly offsets: number[] = [];
  /** Chat actions (typing, …) the bot sent. */
  readonly chatActions: { chatId: string; action: string; threadId: number | undefined }[] = [];
  /** Edits the fake applied, in order (the message in `sent` shows the result). */
  readonly edits: FakeEdit[] = [];
  /** Every callback query the bot answered, in order. */
  readonly callbackAnswers: CallbackAnswer[] = [];
  /** The last command list set with setMyCommands. */
  commands: { command: string; description: string }[] | null = null;
  readonly botUser = { id: 123456789, is_bot: true, first_name: 'Switchboard', username: 'switchboard_test_bot' };

  #server = createServer((req, res) => void this.#handle(req, res));
  #updates: FakeUpdate[] = [];
  #nextUpdateId = 700_000_001;
  #nextMessageId = 1;
  #nextQueryId = 4_000_000_001n;
  /** Callback queries delivered and not answered yet. */
  #openQueries = new Set<string>();
  #confirmedBelow = 0;
  #allowed: string[] = [];
  #waiter: Waiter | null = null;
  #failures = new Map<string, FakeFailure[]>();
  #watchers = new Set<() => void>();

  constructor(token: string) {
    this.token = token;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Queues a text message from a user; returns its update and message ids. */
  pushMessage(input: PushedMessage): { updateId: number; messageId: number } {
    const chatId = input.chatId ?? input.fromId;
    const messageId = this.#nextMessageId++;
    const command = /^\/[A-Za-z0-9_]+(@\w+)?/.exec(input.text);
    const message: Record<string, unknown> = {
      message_id: messageId,
      from: {
        id: input.fromId,
        is_bot: false,
        first_name: input.firstName ?? `User${input.fromId}`,
        ...(input.username ? { username: input.username } : {}),
      },
      chat:
        chatId === input.fromId
          ? { id: chatId, type: 'private', first_name: input.firstName ?? `User${input.fromId}` }
          : { id: chatId, type: 'supergroup', title: 'Test group', ...(input.threadId ? { is_forum: true } : {}) },
      date: Math.floor(Date.now() / 1000),
      text: input.text,
      ...(command ? { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] } : {}),
      ...(input.threadId ? { message_thread_id: input.threadId, is_topic_message: true } : {}),
    };
    return { updateId: this.pushUpdate({ message }), messageId };
  }

  /**
   * Queues a press of a button under message `messageId` (which the bot sent to `chatId`; an unknown message is pressed
   * as an inaccessible one) by user `userId`, carrying `data` as its callback_data; returns the update and query ids.
   */
  press(
    chatId: number,
    userId: number,
    messageId: number,
    data: string,
    options: PressOptions = {},
  ): { updateId: number; queryId: string } {
    const queryId = String(this.#nextQueryId++);
    const sent = this.sent.find((m) => m.chatId === String(chatId) && m.messageId === messageId);
    const message = sent
      ? messageObject(sent, this.botUser)
      : { message_id: messageId, chat: chatObject(chatId), date: 0 };
    this.#openQueries.add(queryId);
    const query = callbackQuery({ queryId, userId, message, data, ...options });
    return { updateId: this.pushUpdate({ callback_query: query }), queryId };
  }

  /** Queues any update (its update_id is assigned here); returns the update id. */
  pushUpdate(update: Omit<FakeUpdate, 'update_id'>): number {
    const updateId = this.#nextUpdateId++;
    this.#updates.push({ update_id: updateId, ...update });
    this.#flushWaiter();
    return updateId;
  }

  /** Updates not confirmed yet (the bot would get them again). */
  pendingUpdates(): FakeUpdate[] {
    return this.#updates.filter((u) => u.update_id >= this.#confirmedBelow);
  }

  /** Highest update id the bot confirmed (by asking for a later offset); 0 when none. */
  get confirmedUpTo(): number {
    return Math.max(0, this.#confirmedBelow - 1);
  }

  /** Makes the next `times` calls of `method` fail with `failure`. */
  fail(method: string, failure: FakeFailure, times = 1): void {
    const queue = this.#failures.get(method.toLowerCase()) ?? [];
    for (let i = 0; i < times; i += 1) queue.push(failure);
    this.#failures.set(method.toLowerCase(), queue);
  }

  /** True while a long-polling getUpdates call is waiting for updates. */
  get polling(): boolean {
    return this.#waiter !== null;
  }

  /** Resolves when `check()` holds (re-checked after every request and update); rejects after `timeoutMs` of real time. */
  waitFor(check: () => boolean, what = 'condition', timeoutMs = 10_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const watcher = (): void => {
        if (!check()) return;
        this.#watchers.delete(watcher);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#watchers.delete(watcher);
        reject(new Error(`fake Telegram: timed out waiting for ${what}`));
      }, timeoutMs);
      this.#watchers.add(watcher);
    });
  }

  /** Resolves with the sent messages once there are at least `count`. */
  async waitForSent(count: number, timeoutMs?: number): Promise<SentMessage[]> {
    await this.waitFor(
      () => this.sent.length >= count,
      `${count} sent message(s) (have ${this.sent.length})`,
      timeoutMs,
    );
    return this.sent;
  }

  /** Calls of one method (case-insensitive). */
  calls(method: string): Params[] {
    return this.requests.filter((r) => r.method.toLowerCase() === method.toLowerCase()).map((r) => r.params);
  }

  async close(): Promise<void> {
    if (this.#waiter) clearTimeout(this.#waiter.timer);
    this.#waiter = null;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #notify(): void {
    for (const watcher of [...this.#watchers]) watcher();
  }

  #reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  #ok(res: ServerResponse, result: unknown): void {
    this.#reply(res, 200, { ok: true, result });
  }

  #error(res: ServerResponse, failure: FakeFailure): void {
    this.#reply(res, failure.status, {
      ok: false,
      error_code: failure.status,
      description: descriptionFor(failure),
      ...(failure.status === 429 ? { parameters: { retry_after: failure.retryAfter ?? 1 } } : {}),
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    let params: Params;
    try {
      params = await readParams(req, url.searchParams);
    } catch {
      this.#error(res, { status: 400, description: 'Bad Request: invalid request body' });
      return;
    }
    if (!match) return this.#error(res, { status: 404, description: 'Not Found' });
    if (match[1] !== this.token) return this.#error(res, { status: 401, description: 'Unauthorized' });
    const method = match[2] ?? '';
    this.requests.push({ method, params });
    try {
      const failure = this.#failures.get(method.toLowerCase())?.shift();
      if (failure) this.#error(res, failure);
      else this.#dispatch(method.toLowerCase(), params, res);
    } finally {
      this.#notify();
    }
  }

  #dispatch(method: string, params: Params, res: ServerResponse): void {
    switch (method) {
      case 'getme':
        return this.#ok(res, {
          ...this.botUser,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        });
      case 'deletewebhook':
        if (params.drop_pending_updates === true) this.#confirmedBelow = this.#nextUpdateId;
        return this.#ok(res, true);
      case 'getwebhookinfo':
        return this.#ok(res, {
          url: '',
          has_custom_certificate: false,
          pending_update_count: this.pendingUpdates().length,
        });
      case 'getupdates':
        return this.#getUpdates(params, res);
      case 'sendmessage':
        return this.#sendMessage(params, res, readText(params));
      case 'senddocument':
        return this.#sendMessage(params, res, readDocument(params));
      case 'editmessagetext':
        return this.#editMessageText(params, res);
      case 'answercallbackquery':
        return this.#answerCallbackQuery(params, res);
      case 'setmycommands':
        return this.#setMyCommands(params, res);
      case 'sendchataction': {
        const threadId = typeof params.message_thread_id === 'number' ? params.message_thread_id : undefined;
        this.chatActions.push({ chatId: String(params.chat_id), action: String(params.action), threadId });
        return this.#ok(res, true);
      }
      default:
        return this.#error(res, { status: 404, description: 'Not Found: method not found' });
    }
  }

  #available(limit: number): FakeUpdate[] {
    const allowed = this.#allowed.length > 0 ? this.#allowed : null;
    return this.pendingUpdates()
      .filter((u) => !allowed || allowed.some((kind) => kind in u))
      .slice(0, limit);
  }

  #getUpdates(params: Params, res: ServerResponse): void {
    const offset = typeof params.offset === 'number' ? params.offset : undefined;
    if (offset !== undefined) {
      this.offsets.push(offset);
      if (offset > 0) this.#confirmedBelow = Math.max(this.#confirmedBelow, offset);
      else if (offset < 0) {
        const keep = this.pendingUpdates().slice(offset);
        this.#confirmedBelow = Math.max(this.#confirmedBelow, keep[0]?.update_id ?? this.#nextUpdateId);
      }
    }
    if (Array.isArray(params.allowed_updates)) this.#allowed = params.allowed_updates.map(String);
    const limit = typeof params.limit === 'number' ? Math.min(100, Math.max(1, params.limit)) : 100;
    const timeout = typeof params.timeout === 'number' ? Math.min(50, Math.max(0, params.timeout)) : 0;
    // A newer getUpdates call terminates the one still waiting, as Telegram does.
    if (this.#waiter) {
      const old = this.#waiter;
      this.#waiter = null;
      clearTimeout(old.timer);
      this.#error(old.res, { status: 409 });
    }
    const ready = this.#available(limit);
    if (ready.length > 0 || timeout === 0) return this.#ok(res, ready);
    const waiter: Waiter = {
      res,
      limit,
      timer: setTimeout(() => {
        if (this.#waiter === waiter) this.#waiter = null;
        this.#ok(res, []);
      }, timeout * 1000),
    };
    res.on('close', () => {
      if (this.#waiter !== waiter) return;
      clearTimeout(waiter.timer);
      this.#waiter = null;
      this.#notify();
    });
    this.#waiter = waiter;
  }

  #flushWaiter(): void {
    const waiter = this.#waiter;
    if (!waiter) return this.#notify();
    const ready = this.#available(waiter.limit);
    if (ready.length > 0) {
      this.#waiter = null;
      clearTimeout(waiter.timer);
      this.#ok(waiter.res, ready);
    }
    this.#notify();
  }

  /** A sendMessage (`read` its text) or a sendDocument (`read` its document and caption). */
  #sendMessage(params: Params, res: ServerResponse, read: ReadText | ReadDocument): void {
    if (params.chat_id === undefined || params.chat_id === '')
      return this.#error(res, { status: 400, description: 'Bad Request: chat_id is empty' });
    if (!read.ok) return this.#error(res, { status: 400, description: read.error });
    const markup = parseInlineKeyboard(params.reply_markup);
    if (!markup.ok) return this.#error(res, { status: 400, description: markup.error });
    const threadId = typeof params.message_thread_id === 'number' ? params.message_thread_id : undefined;
    const replyParameters = params.reply_parameters as { message_id?: unknown } | undefined;
    const replyTo =
      typeof replyParameters?.message_id === 'number'
        ? replyParameters.message_id
        : typeof params.reply_to_message_id === 'number'
          ? params.reply_to_message_id
          : undefined;
    const sent: SentMessage = {
      messageId: this.#nextMessageId++,
      chatId: String(params.chat_id),
      rawText: read.raw,
      text: read.text,
      parseMode: read.parseMode,
      entities: read.entities,
      threadId,
      replyToMessageId: replyTo,
      keyboard: markup.keyboard,
      ...('document' in read ? { document: read.document } : {}),
    };
    this.sent.push(sent);
    this.#ok(res, messageObject(sent, this.botUser));
  }

  #editMessageText(params: Params, res: ServerResponse): void {
    if (params.inline_message_id !== undefined)
      return this.#error(res, { status: 400, description: 'Bad Request: MESSAGE_ID_INVALID' });
    const sent = this.sent.find((m) => m.chatId === String(params.chat_id) && m.messageId === params.message_id);
    if (!sent) return this.#error(res, { status: 400, description: 'Bad Request: message to edit not found' });
    const read = readText(params);
    if (!read.ok) return this.#error(res, { status: 400, description: read.error });
    const markup = parseInlineKeyboard(params.reply_markup);
    if (!markup.ok) return this.#error(res, { status: 400, description: markup.error });
    const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
    if (sent.text === read.text && same(sent.entities, read.entities) && same(sent.keyboard, markup.keyboard)) {
      return this.#error(res, {
        status: 400,
        description:
          'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      });
    }
    Object.assign(sent, {
      rawText: read.raw,
      text: read.text,
      parseMode: read.parseMode,
      entities: read.entities,
      keyboard: markup.keyboard,
    });
    this.edits.push({
      chatId: sent.chatId,
      messageId: sent.messageId,
      text: read.text,
      parseMode: read.parseMode,
      keyboard: markup.keyboard,
    });
    this.#ok(res, { ...messageObject(sent, this.botUser), edit_date: Math.floor(Date.now() / 1000) });
  }

  #answerCallbackQuery(params: Params, res: ServerResponse): void {
    const queryId = String(params.callback_query_id ?? '');
    if (!this.#openQueries.delete(queryId)) {
      return this.#error(res, {
        status: 400,
        description: 'Bad Request: query is too old and response timeout expired or query ID is invalid',
      });
    }
    const text = typeof params.text === 'string' && params.text !== '' ? params.text : undefined;
    if (text !== undefined && [...text].length > 200)
      return this.#error(res, { status: 400, description: 'Bad Request: MESSAGE_TOO_LONG' });
    this.callbackAnswers.push({ queryId, text, showAlert: params.show_alert === true });
    this.#ok(res, true);
  }

  #setMyCommands(params: Params, res: ServerResponse): void {
    const commands = params.commands;
    if (!Array.isArray(commands))
      return this.#error(res, { status: 400, description: 'Bad Request: parameter "commands" is required' });
    const list: { command: string; description: string }[] = [];
    for (const entry of commands as { command?: unknown; description?: unknown }[]) {
      const command = typeof entry.command === 'string' ? entry.command : '';
      const description = typeof entry.description === 'string' ? entry.description : '';
      if (!/^[a-z0-9_]{1,32}$/.test(command))
        return this.#error(res, { status: 400, description: 'Bad Request: BOT_COMMAND_INVALID' });
      if (description.length < 1 || description.length > 256) {
        return this.#error(res, { status: 400, description: 'Bad Request: BOT_COMMAND_DESCRIPTION_INVALID' });
      }
      list.push({ command, description });
    }
    this.commands = list;
    this.#ok(res, true);
  }
}

/** Starts a fake Bot API for `token` on 127.0.0.1 (random port). */
export async function startFakeTelegram(token = FAKE_BOT_TOKEN): Promise<FakeTelegram> {
  const fake = new FakeTelegram(token);
  await fake.listen();
  return fake;
}

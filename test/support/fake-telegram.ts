// A fake Telegram Bot API on 127.0.0.1 speaking the real wire format at /bot<token>/<method> (JSON, urlencoded and
// multipart bodies, or query parameters): getMe, deleteWebhook, getWebhookInfo, getUpdates (long polling with
// `timeout`, `offset` confirming earlier updates, `allowed_updates`, 409 when a newer poll replaces a pending one),
// sendMessage (MarkdownV2 checked like Telegram does, see fake-telegram-markdown.ts), setMyCommands, sendChatAction.
// Tests push user messages, read and await what the bot sent, script failures (429 with retry_after, 500, 409, any 4xx)
// and look at the offsets the bot confirmed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ParsedEntity } from './fake-telegram-markdown.ts';
import { parseMarkdownV2 } from './fake-telegram-markdown.ts';

export const FAKE_BOT_TOKEN = '123456789:AAFakeTokenForTestsOnly_0123456789abc';

/** One update as Telegram serializes it (only the kinds the fake produces). */
export interface FakeUpdate {
  update_id: number;
  message?: Record<string, unknown>;
  [kind: string]: unknown;
}

/** A message the bot sent, as the fake understood it. */
export interface SentMessage {
  messageId: number;
  chatId: string;
  /** The text exactly as sent (with MarkdownV2 markup and escapes). */
  rawText: string;
  /** The text a user sees (markup parsed away). */
  text: string;
  parseMode: string | undefined;
  entities: ParsedEntity[];
  threadId: number | undefined;
  replyToMessageId: number | undefined;
}

/** A scripted error answer. */
export interface FakeFailure {
  status: number;
  description?: string;
  /** For 429: seconds, sent as `parameters.retry_after`. */
  retryAfter?: number;
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

type Params = Record<string, unknown>;

interface Waiter {
  res: ServerResponse;
  limit: number;
  timer: NodeJS.Timeout;
}

function descriptionFor(failure: FakeFailure): string {
  if (failure.description) return failure.description;
  switch (failure.status) {
    case 429:
      return `Too Many Requests: retry after ${failure.retryAfter ?? 1}`;
    case 409:
      return 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden: bot was blocked by the user';
    case 400:
      return 'Bad Request: chat not found';
    default:
      return 'Internal Server Error';
  }
}

function coerce(value: string): unknown {
  const trimmed = value.trim();
  if (/^[[{]/.test(trimmed) || /^-?\d+$/.test(trimmed) || trimmed === 'true' || trimmed === 'false') {
    try {
      return JSON.parse(trimmed);
    } catch {
      return value;
    }
  }
  return value;
}

function parseMultipart(body: string, contentType: string): Params {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const mark = boundary?.[1] ?? boundary?.[2];
  const params: Params = {};
  if (!mark) return params;
  for (const part of body.split(`--${mark}`)) {
    const name = /name="([^"]+)"/.exec(part)?.[1];
    const split = part.indexOf('\r\n\r\n');
    if (!name || split === -1) continue;
    params[name] = coerce(part.slice(split + 4).replace(/\r\n$/, ''));
  }
  return params;
}

async function readParams(req: IncomingMessage, query: URLSearchParams): Promise<Params> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  const params: Params = {};
  for (const [key, value] of query) params[key] = coerce(value);
  const type = req.headers['content-type'] ?? '';
  if (body.trim() === '') return params;
  if (type.includes('application/json')) return { ...params, ...(JSON.parse(body) as Params) };
  if (type.includes('multipart/form-data')) return { ...params, ...parseMultipart(body, type) };
  for (const [key, value] of new URLSearchParams(body)) params[key] = coerce(value);
  return params;
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
  /** The last command list set with setMyCommands. */
  commands: { command: string; description: string }[] | null = null;
  readonly botUser = { id: 123456789, is_bot: true, first_name: 'Switchboard', username: 'switchboard_test_bot' };

  #server = createServer((req, res) => void this.#handle(req, res));
  #updates: FakeUpdate[] = [];
  #nextUpdateId = 700_000_001;
  #nextMessageId = 1;
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
        return this.#sendMessage(params, res);
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

  #sendMessage(params: Params, res: ServerResponse): void {
    if (params.chat_id === undefined || params.chat_id === '')
      return this.#error(res, { status: 400, description: 'Bad Request: chat_id is empty' });
    const raw = typeof params.text === 'string' ? params.text : '';
    const parseMode = typeof params.parse_mode === 'string' && params.parse_mode !== '' ? params.parse_mode : undefined;
    let text = raw;
    let entities: ParsedEntity[] = [];
    if (parseMode !== undefined) {
      if (parseMode !== 'MarkdownV2')
        return this.#error(res, { status: 400, description: 'Bad Request: unsupported parse_mode' });
      const parsed = parseMarkdownV2(raw);
      if (!parsed.ok)
        return this.#error(res, { status: 400, description: `Bad Request: can't parse entities: ${parsed.error}` });
      text = parsed.text;
      entities = parsed.entities;
    }
    if (text.trim() === '') return this.#error(res, { status: 400, description: 'Bad Request: message text is empty' });
    if ([...text].length > 4096)
      return this.#error(res, { status: 400, description: 'Bad Request: message is too long' });
    const threadId = typeof params.message_thread_id === 'number' ? params.message_thread_id : undefined;
    const replyParameters = params.reply_parameters as { message_id?: unknown } | undefined;
    const replyTo =
      typeof replyParameters?.message_id === 'number'
        ? replyParameters.message_id
        : typeof params.reply_to_message_id === 'number'
          ? params.reply_to_message_id
          : undefined;
    const messageId = this.#nextMessageId++;
    this.sent.push({
      messageId,
      chatId: String(params.chat_id),
      rawText: raw,
      text,
      parseMode,
      entities,
      threadId,
      replyToMessageId: replyTo,
    });
    const chatId = Number(params.chat_id);
    this.#ok(res, {
      message_id: messageId,
      from: this.botUser,
      chat:
        chatId > 0
          ? { id: chatId, type: 'private', first_name: 'User' }
          : { id: chatId, type: 'supergroup', title: 'Test group' },
      date: Math.floor(Date.now() / 1000),
      text,
      ...(entities.length > 0 ? { entities } : {}),
      ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
    });
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

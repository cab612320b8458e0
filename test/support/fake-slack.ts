// A fake Slack on 127.0.0.1 speaking the real wire format: the Web API at /api/<method> (form or JSON bodies, the token
// as a Bearer header) with auth.test, chat.postMessage, chat.postEphemeral, chat.update, the external file upload flow
// (files.getUploadURLExternal, the upload POST, files.completeUploadExternal; see fake-slack-files.ts) and apps.connections.open
// (handing out a ws:// URL to the fake's own Socket Mode server, see fake-slack-socket.ts), and scripted 429s with
// Retry-After. Tests push what people do (DM, mention, slash command, button press) as Socket Mode envelopes, or post
// them signed to a daemon's POST /slack/events (fake-slack-payloads.ts), and read what the app posted and edited.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeSlackFile } from './fake-slack-files.ts';
import { FakeSlackFiles } from './fake-slack-files.ts';
import type { PushedSlackMessage } from './fake-slack-payloads.ts';
import {
  blockActionsPayload,
  commandPayload,
  eventCallback,
  FAKE_TEAM,
  mentionEvent,
  messageEvent,
} from './fake-slack-payloads.ts';
import type { FakeAck } from './fake-slack-socket.ts';
import { FakeSocketMode } from './fake-slack-socket.ts';

export type { FakeAck, FakeSlackFile, PushedSlackMessage };

export const FAKE_BOT_TOKEN = 'xoxb-fake-bot-token';
export const FAKE_APP_TOKEN = 'xapp-fake-app-token';
export const FAKE_BOT_USER = 'UBOT';
export const FAKE_BOT_ID = 'BBOT';

/** A button of a posted message, as rendered in its Block Kit actions. */
export interface FakeSlackButton {
  actionId: string;
  label: string;
  value: string;
}

/** A message the app posted (chat.postMessage or chat.postEphemeral), as it now reads (after any chat.update). */
export interface FakeSlackPost {
  channel: string;
  ts: string;
  /** The text as a person reads it (mrkdwn escapes undone). */
  text: string;
  /** The raw `text` field. */
  raw: string;
  blocks: unknown[] | undefined;
  buttons: FakeSlackButton[][];
  threadTs: string | undefined;
  /** Set for chat.postEphemeral: the one user who sees it. */
  ephemeralTo: string | undefined;
}

/** A chat.update the fake applied. */
export interface FakeSlackUpdate {
  channel: string;
  ts: string;
  text: string;
  buttons: FakeSlackButton[][];
}

type Params = Record<string, unknown>;

/** Undoes Slack's three escapes. */
export function unescapeSlack(text: string): string {
  return text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

function buttonsOf(blocks: unknown[] | undefined): FakeSlackButton[][] {
  const rows: FakeSlackButton[][] = [];
  for (const block of blocks ?? []) {
    const b = block as { type?: string; elements?: { action_id: string; text: { text: string }; value: string }[] };
    if (b.type === 'actions')
      rows.push((b.elements ?? []).map((e) => ({ actionId: e.action_id, label: e.text.text, value: e.value })));
  }
  return rows;
}

function parseBlocks(value: unknown): unknown[] | undefined {
  if (value === undefined) return undefined;
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(parsed)) throw new Error('blocks is not an array');
  return parsed;
}

/** The fake. Start it with `startFakeSlack()`. */
export class FakeSlack {
  url = '';
  readonly botToken = FAKE_BOT_TOKEN;
  readonly appToken = FAKE_APP_TOKEN;
  readonly botUserId = FAKE_BOT_USER;
  /** Every message posted, in order. */
  readonly posts: FakeSlackPost[] = [];
  readonly updates: FakeSlackUpdate[] = [];
  /** Every Web API call: method and parameters. */
  readonly calls: { method: string; params: Params }[] = [];
  /** The file uploads: `files.shared` lists the files shared in channels. */
  readonly files = new FakeSlackFiles();
  #server = createServer((req, res) => void this.#handle(req, res));
  #socket: FakeSocketMode;
  #seq = 0;
  #rateLimits = new Map<string, { times: number; retryAfter: number }>();
  #refusals = new Map<string, string>();

  constructor() {
    this.#socket = new FakeSocketMode(this.#server, '/socket');
  }

  /** The Web API base to configure (`channels.slack.apiUrl`). */
  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  get socket(): FakeSocketMode {
    return this.#socket;
  }

  get acks(): FakeAck[] {
    return this.#socket.acks;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await this.#socket.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The next `times` calls of `method` answer 429 with Retry-After: `retryAfter` seconds. */
  rateLimit(method: string, retryAfter: number, times = 1): void {
    this.#rateLimits.set(method, { times, retryAfter });
  }

  /** Makes the next call of `method` answer Slack's platform error `error` (e.g. missing_scope). */
  refuse(method: string, error: string): void {
    this.#refusals.set(method, error);
  }

  /** A fresh message ts (`<seconds>.<micro>`), increasing. */
  nextTs(): string {
    this.#seq += 1;
    return `${1_700_000_000 + this.#seq}.${String(this.#seq).padStart(6, '0')}`;
  }

  /** A person's message in a DM with the app (or in `channel`), delivered as an events_api envelope. */
  pushMessage(message: PushedSlackMessage): { envelopeId: string; ts: string; channel: string } {
    const ts = this.nextTs();
    const event = messageEvent(message, ts);
    const envelopeId = this.#socket.push('events_api', eventCallback(event, `Ev${this.#seq}`));
    return { envelopeId, ts, channel: String(event.channel) };
  }

  /** A mention of the app in a channel, delivered as an events_api envelope. */
  pushMention(message: PushedSlackMessage): { envelopeId: string; ts: string; channel: string } {
    const ts = this.nextTs();
    const event = mentionEvent(message, ts, this.botUserId);
    const envelopeId = this.#socket.push('events_api', eventCallback(event, `Ev${this.#seq}`));
    return { envelopeId, ts, channel: String(event.channel) };
  }

  /** The slash command `command text` by `user` in `channel` (default their DM), as a slash_commands envelope. */
  pushCommand(user: string, text: string, channel = `D${user}`, command = '/switchboard'): string {
    this.#seq += 1;
    return this.#socket.push('slash_commands', commandPayload(command, user, text, channel, `trig-${this.#seq}`));
  }

  /** `user` presses the button labelled `label` under the posted message `post`, as an interactive envelope. */
  press(user: string, post: FakeSlackPost, label: string): string {
    const button = post.buttons.flat().find((b) => b.label === label);
    if (!button) throw new Error(`no button "${label}" under ${post.ts}`);
    this.#seq += 1;
    return this.#socket.push(
      'interactive',
      blockActionsPayload({
        user,
        channel: post.channel,
        messageTs: post.ts,
        ...(post.threadTs ? { threadTs: post.threadTs } : {}),
        actionId: button.actionId,
        value: button.value,
        actionTs: `${1_700_000_000 + this.#seq}.5`,
        triggerId: `trig-${this.#seq}`,
      }),
    );
  }

  /** Posts to `channel` (texts as read), in order. */
  textsIn(channel: string): string[] {
    return this.posts.filter((p) => p.channel === channel).map((p) => p.text);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = /^\/api\/([\w.]+)/.exec(req.url ?? '');
    const upload = /^\/upload\/(\w+)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || (!match && !upload)) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (upload) {
      const answer = await this.files.receive(
        upload[1] ?? '',
        Buffer.concat(chunks),
        req.headers['content-type'] ?? '',
      );
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
      return;
    }
    const method = match?.[1] ?? '';
    const text = Buffer.concat(chunks).toString('utf8');
    const params: Params = req.headers['content-type']?.startsWith('application/json')
      ? (JSON.parse(text || '{}') as Params)
      : Object.fromEntries(new URLSearchParams(text));
    this.calls.push({ method, params });
    const limit = this.#rateLimits.get(method);
    if (limit && limit.times > 0) {
      limit.times -= 1;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(limit.retryAfter) });
      res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
      return;
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? String(params.token ?? '');
    const refusal = this.#refusals.get(method);
    this.#refusals.delete(method);
    const reply = refusal ? { ok: false, error: refusal } : this.#answer(method, params, token);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(reply));
  }

  #answer(method: string, params: Params, token: string): Params {
    if (method === 'apps.connections.open') {
      if (token !== this.appToken) return { ok: false, error: 'invalid_auth' };
      return { ok: true, url: `${this.url.replace('http', 'ws')}/socket?ticket=fake-${this.#seq}` };
    }
    if (token !== this.botToken) return { ok: false, error: 'invalid_auth' };
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: 'https://fake.slack.com/',
          team: 'Fake',
          user: 'switchboard',
          team_id: FAKE_TEAM,
          user_id: FAKE_BOT_USER,
          bot_id: FAKE_BOT_ID,
        };
      case 'chat.postMessage':
      case 'chat.postEphemeral':
        return this.#post(method, params);
      case 'chat.update':
        return this.#update(params);
      case 'files.getUploadURLExternal':
        return this.files.uploadUrl(params, this.url);
      case 'files.completeUploadExternal':
        return this.files.complete(params);
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  #post(method: string, params: Params): Params {
    const channel = String(params.channel ?? '');
    const raw = String(params.text ?? '');
    if (!channel) return { ok: false, error: 'channel_not_found' };
    let blocks: unknown[] | undefined;
    try {
      blocks = parseBlocks(params.blocks);
    } catch {
      return { ok: false, error: 'invalid_blocks' };
    }
    if (!raw && !blocks) return { ok: false, error: 'no_text' };
    const ts = this.nextTs();
    const ephemeralTo = method === 'chat.postEphemeral' ? String(params.user ?? '') : undefined;
    const threadTs = params.thread_ts === undefined ? undefined : String(params.thread_ts);
    this.posts.push({
      channel,
      ts,
      text: unescapeSlack(raw),
      raw,
      blocks,
      buttons: buttonsOf(blocks),
      threadTs,
      ephemeralTo,
    });
    return ephemeralTo === undefined
      ? { ok: true, channel, ts, message: { type: 'message', text: raw, ts, bot_id: FAKE_BOT_ID } }
      : { ok: true, message_ts: ts };
  }

  #update(params: Params): Params {
    const post = this.posts.find((p) => p.channel === params.channel && p.ts === params.ts && !p.ephemeralTo);
    if (!post) return { ok: false, error: 'message_not_found' };
    let blocks: unknown[] | undefined;
    try {
      blocks = parseBlocks(params.blocks);
    } catch {
      return { ok: false, error: 'invalid_blocks' };
    }
    post.raw = String(params.text ?? post.raw);
    post.text = unescapeSlack(post.raw);
    if (blocks !== undefined) {
      post.blocks = blocks;
      post.buttons = buttonsOf(blocks);
    }
    this.updates.push({ channel: post.channel, ts: post.ts, text: post.text, buttons: post.buttons });
    return { ok: true, channel: post.channel, ts: post.ts, text: post.raw };
  }
}

/** Starts a fake Slack on an ephemeral port. */
export async function startFakeSlack(): Promise<FakeSlack> {
  const fake = new FakeSlack();
  await fake.listen();
  return fake;
}

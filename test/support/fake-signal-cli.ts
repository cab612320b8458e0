// A fake of signal-cli's HTTP daemon (`signal-cli daemon --http`) on 127.0.0.1, speaking its wire format:
// POST /api/v1/rpc (JSON-RPC 2.0: send — to `recipient` numbers or a `groupId`, answering `{ timestamp, results }` —,
// sendTyping, listGroups and listAccounts; JSON-RPC errors for an unknown account, an unregistered number or an unknown group; 415
// without a JSON content type), GET /api/v1/events (Server-Sent Events `event:receive` with `id:<start>-<seq>` and
// `data:{"account":…,"envelope":…}`, `?account=` filtering, and the last 1000 events replayed after `Last-Event-ID`
// — all of them for an unknown id —, as signal-cli does) and GET /api/v1/check. Tests push messages (DMs and group
// messages), replay an event, drop the open streams, and read what was sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, splitUrl } from './mock-http.ts';

/** A message the bot sent through `send`. */
export interface FakeSignalSent {
  account: string;
  /** The number it went to (a DM), or undefined for a group. */
  recipient?: string;
  groupId?: string;
  message: string;
  quoteTimestamp?: number;
  quoteAuthor?: string;
  timestamp: number;
}

/** A message a person sends to the bot's number. */
export interface FakeSignalPush {
  from: string;
  text: string;
  /** A group message when set (base64 id; the group is known to the fake from then on). */
  groupId?: string;
  name?: string;
  /** The bot account it reaches (default the fake's first account). */
  account?: string;
  /** Attachments only, no text. */
  attachmentOnly?: boolean;
}

/** One kept event of the stream. */
interface KeptEvent {
  seq: number;
  account: string;
  data: string;
}

interface Stream {
  res: ServerResponse;
  accounts: readonly string[];
}

/** The fake daemon. */
export interface FakeSignalCli {
  url: string;
  /** Every `send` the daemon accepted, in order. */
  sent: FakeSignalSent[];
  /** The recipients (`+…` or `group.<id>`) of every sendTyping. */
  typing: string[];
  /** Every GET /api/v1/events, with the Last-Event-ID it named. */
  streamRequests: { account: string | null; lastEventId: string | undefined }[];
  /** Streams open now. */
  readonly openStreams: number;
  /** Pushes a received message to the streams; returns its envelope timestamp and event id. */
  push(message: FakeSignalPush): { timestamp: number; eventId: string };
  /** Sends event `eventId` again under a new id (signal-cli delivering the same envelope twice). */
  replay(eventId: string): void;
  /** Pushes a receipt (an envelope without a data message). */
  pushReceipt(from: string): void;
  /** Makes `number` known (so sends to it succeed). */
  register(number: string): void;
  /**
   * Makes the next `send` fail: with a JSON-RPC error (`code`, `message`), or with a result whose one recipient failed
   * (`type` like RATE_LIMIT_FAILURE, with `retryAfterSeconds`).
   */
  failNextSend(failure: { code: number; message: string } | { type: string; retryAfterSeconds?: number }): void;
  /** Closes every open event stream (the connection drops). */
  dropStreams(): void;
  /** The texts sent to `to` (a number, or `group.<id>` for a group). */
  textsTo(to: string): string[];
  close(): Promise<void>;
}

/** Starts the fake serving `accounts` (the first is the default); `registered` numbers can receive messages. */
export async function startFakeSignalCli(
  options: { accounts?: string[]; registered?: string[] } = {},
): Promise<FakeSignalCli> {
  const accounts = options.accounts ?? ['+15550000001'];
  const registered = new Set(options.registered ?? []);
  const groups = new Set<string>();
  const startedAt = 1_700_000_000_000;
  const prefix = `${startedAt}-`;
  let clock = startedAt;
  const tick = (): number => (clock += 1_000);
  let seq = 0;
  const kept: KeptEvent[] = [];
  const streams = new Set<Stream>();
  const sent: FakeSignalSent[] = [];
  const typing: string[] = [];
  const streamRequests: FakeSignalCli['streamRequests'] = [];
  let nextFailure: Parameters<FakeSignalCli['failNextSend']>[0] | null = null;

  const write = (stream: Stream, event: KeptEvent): void => {
    if (!stream.accounts.includes(event.account)) return;
    stream.res.write(`id:${prefix}${event.seq}\nevent:receive\ndata:${event.data}\n\n`);
  };
  const emit = (account: string, payload: Record<string, unknown>): string => {
    const event = { seq: (seq += 1), account, data: JSON.stringify({ account, ...payload }) };
    kept.push(event);
    if (kept.length > 1000) kept.shift();
    for (const stream of streams) write(stream, event);
    return `${prefix}${event.seq}`;
  };

  const rpc = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      res.writeHead(415).end();
      return;
    }
    const request = JSON.parse(await readBody(req)) as {
      id?: unknown;
      method?: string;
      params?: Record<string, unknown>;
    };
    const reply = (body: Record<string, unknown>): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id ?? null, ...body }));
    };
    const error = (code: number, message: string): void => reply({ error: { code, message, data: null } });
    const params = request.params ?? {};
    const account = typeof params.account === 'string' ? params.account : accounts[0];
    if (!account || !accounts.includes(account)) return error(-32602, 'Specified account does not exist');
    const recipients = [params.recipient ?? []].flat().map(String);
    const groupId = typeof params.groupId === 'string' ? params.groupId : undefined;
    const check = (): boolean => {
      if (groupId !== undefined && !groups.has(groupId)) {
        error(-1, 'Failed to send to group: Invalid group id');
        return false;
      }
      const unknown = recipients.find((r) => !registered.has(r));
      if (unknown !== undefined) {
        error(-1, `Failed to send message: ${unknown}: Unregistered user`);
        return false;
      }
      if (groupId === undefined && recipients.length === 0) {
        error(-32602, 'No recipients given');
        return false;
      }
      return true;
    };
    switch (request.method ?? '') {
      case 'send': {
        if (!check()) return;
        const failure = nextFailure;
        nextFailure = null;
        if (failure && 'code' in failure) return error(failure.code, failure.message);
        if (failure) {
          const { type, retryAfterSeconds } = failure;
          const result = { recipientAddress: { number: recipients[0] ?? null }, type, retryAfterSeconds };
          return reply({ result: { timestamp: tick(), results: [result] } });
        }
        const timestamp = tick();
        const base = { account, message: String(params.message ?? ''), timestamp };
        const quote =
          typeof params.quoteTimestamp === 'number'
            ? { quoteTimestamp: params.quoteTimestamp, quoteAuthor: String(params.quoteAuthor) }
            : {};
        if (groupId !== undefined) sent.push({ ...base, groupId, ...quote });
        else for (const recipient of recipients) sent.push({ ...base, recipient, ...quote });
        const results = (groupId !== undefined ? [account] : recipients).map((number) => ({
          recipientAddress: { uuid: null, number },
          ...(groupId !== undefined ? { groupId } : {}),
          type: 'SUCCESS',
        }));
        return reply({ result: { timestamp, results } });
      }
      case 'sendTyping':
        if (!check()) return;
        typing.push(groupId !== undefined ? `group.${groupId}` : recipients.join(','));
        return reply({ result: {} });
      case 'listAccounts':
        return reply({ result: accounts.map((number) => ({ number })) });
      case 'listGroups':
        return reply({ result: [...groups].map((id) => ({ id, name: `group ${id}`, isMember: true })) });
      default:
        return error(-32601, `Method not implemented`);
    }
  };

  const events = (req: IncomingMessage, res: ServerResponse, query: string): void => {
    const wanted = new URLSearchParams(query).get('account');
    if (wanted && !accounts.includes(wanted)) {
      res.writeHead(400).end();
      return;
    }
    const lastEventId = req.headers['last-event-id'] as string | undefined;
    streamRequests.push({ account: wanted, lastEventId });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    const stream: Stream = { res, accounts: wanted ? [wanted] : accounts };
    if (lastEventId !== undefined) {
      const after = lastEventId.startsWith(prefix) ? Number(lastEventId.slice(prefix.length)) || 0 : 0;
      for (const event of kept) if (event.seq > after) write(stream, event);
    }
    streams.add(stream);
    res.on('close', () => streams.delete(stream));
  };

  const server = createServer((req, res) => {
    const { path, query } = splitUrl(req.url);
    if (path === '/api/v1/rpc' && req.method === 'POST') {
      rpc(req, res).catch((err: unknown) => res.writeHead(500).end(String(err)));
    } else if (path === '/api/v1/events' && req.method === 'GET') {
      events(req, res, query);
    } else if (path === '/api/v1/check' && req.method === 'GET') {
      res.writeHead(200).end();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    typing,
    streamRequests,
    get openStreams() {
      return streams.size;
    },
    push(message) {
      const account = message.account ?? accounts[0] ?? '';
      registered.add(message.from);
      if (message.groupId !== undefined) groups.add(message.groupId);
      const timestamp = tick();
      const dataMessage: Record<string, unknown> = {
        timestamp,
        message: message.attachmentOnly ? null : message.text,
        expiresInSeconds: 0,
        viewOnce: false,
        attachments: message.attachmentOnly ? [{ contentType: 'image/png', id: 'a1', size: 3 }] : [],
        ...(message.groupId !== undefined
          ? { groupInfo: { groupId: message.groupId, groupName: 'team', revision: 1, type: 'DELIVER' } }
          : {}),
      };
      const envelope = {
        source: message.from,
        sourceNumber: message.from,
        sourceUuid: `uuid-${message.from.replace(/\D/g, '')}`,
        sourceName: message.name ?? `Person ${message.from}`,
        sourceDevice: 1,
        timestamp,
        serverReceivedTimestamp: timestamp + 5,
        serverDeliveredTimestamp: timestamp + 9,
        dataMessage,
      };
      return { timestamp, eventId: emit(account, { envelope }) };
    },
    replay(eventId) {
      const event = kept.find((e) => `${prefix}${e.seq}` === eventId);
      if (!event) throw new Error(`no kept event ${eventId}`);
      emit(event.account, JSON.parse(event.data) as Record<string, unknown>);
    },
    pushReceipt(from) {
      const timestamp = tick();
      emit(accounts[0] as string, {
        envelope: {
          source: from,
          sourceNumber: from,
          timestamp,
          receiptMessage: { when: timestamp, isDelivery: true, isRead: false, timestamps: [timestamp - 1] },
        },
      });
    },
    register(number) {
      registered.add(number);
    },
    failNextSend(failure) {
      nextFailure = failure;
    },
    dropStreams() {
      for (const stream of streams) stream.res.destroy();
      streams.clear();
    },
    textsTo(to) {
      return sent
        .filter((m) => (to.startsWith('group.') ? `group.${m.groupId}` === to : m.recipient === to))
        .map((m) => m.message);
    },
    async close() {
      for (const stream of streams) stream.res.destroy();
      streams.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

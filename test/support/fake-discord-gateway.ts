// The fake Discord Gateway: a WebSocket at /gateway speaking JSON (no compression, as discord.js asks for without
// zlib-sync: `?v=10&encoding=json`). HELLO with a heartbeat interval, heartbeats ACKed, IDENTIFY (token checked,
// intents recorded) answered with READY and one GUILD_CREATE per guild, RESUME answered with INVALID_SESSION (the
// client identifies again), and dispatches (MESSAGE_CREATE, INTERACTION_CREATE, THREAD_CREATE) to every identified
// connection, each with the connection's next sequence number.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';

/** What the gateway needs from its fake. */
export interface GatewayHost {
  token: string;
  /** The gateway's own ws:// URL (READY's resume_gateway_url). */
  wsUrl(): string;
  /** READY's payload (without session and shard fields). */
  ready(): Record<string, unknown>;
  /** The GUILD_CREATE payloads sent after READY. */
  guilds(): Record<string, unknown>[];
}

/** An IDENTIFY the gateway received. */
export interface Identify {
  intents: number;
  compress: boolean;
}

interface Connection {
  socket: WebSocket;
  seq: number;
  identified: boolean;
}

/** The heartbeat interval HELLO announces (ms). */
const HEARTBEAT_INTERVAL = 5_000;

/** The Gateway server of one fake. */
export class FakeGateway {
  /** Every connect URL's query (`v=10&encoding=json`), in order. */
  readonly connectQueries: string[] = [];
  readonly identifies: Identify[] = [];
  heartbeats = 0;
  #host: GatewayHost;
  #wss = new WebSocketServer({ noServer: true });
  #connections = new Set<Connection>();
  #sessions = 0;

  constructor(host: GatewayHost) {
    this.#host = host;
  }

  /** Connections that identified and get dispatches. */
  get ready(): number {
    return [...this.#connections].filter((c) => c.identified).length;
  }

  /** Takes an HTTP upgrade to /gateway; other paths are refused. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname !== '/gateway') {
      socket.destroy();
      return;
    }
    this.connectQueries.push(url.search.slice(1));
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#open(ws, url.searchParams));
  }

  /** Sends a dispatch (op 0) of event `t` to every identified connection. */
  dispatch(t: string, d: Record<string, unknown>): void {
    for (const connection of this.#connections) if (connection.identified) this.#dispatch(connection, t, d);
  }

  /** Closes every connection with `code` (4000 lets discord.js reconnect). */
  drop(code = 4000): void {
    for (const connection of this.#connections) connection.socket.close(code, 'fake drop');
  }

  /** Closes every connection and the server. */
  close(): void {
    for (const connection of this.#connections) connection.socket.terminate();
    this.#wss.close();
  }

  #open(socket: WebSocket, query: URLSearchParams): void {
    if (query.get('v') !== '10' || query.get('encoding') !== 'json' || query.has('compress')) {
      socket.close(4012, 'the fake speaks v10 JSON without transport compression');
      return;
    }
    const connection: Connection = { socket, seq: 0, identified: false };
    this.#connections.add(connection);
    socket.on('close', () => this.#connections.delete(connection));
    socket.on('message', (data: Buffer) => this.#receive(connection, data));
    this.#send(connection, { op: 10, d: { heartbeat_interval: HEARTBEAT_INTERVAL }, s: null, t: null });
  }

  #receive(connection: Connection, data: Buffer): void {
    let payload: { op?: number; d?: unknown };
    try {
      payload = JSON.parse(data.toString('utf8')) as { op?: number; d?: unknown };
    } catch {
      connection.socket.close(4002, 'Error while decoding payload.');
      return;
    }
    if (payload.op === 1) {
      this.heartbeats += 1;
      this.#send(connection, { op: 11, d: null, s: null, t: null });
    } else if (payload.op === 2) {
      this.#identify(connection, payload.d as { token?: string; intents?: number; compress?: boolean });
    } else if (payload.op === 6) {
      // Sessions are not kept across connections: the client is told to identify anew.
      this.#send(connection, { op: 9, d: false, s: null, t: null });
    }
  }

  #identify(connection: Connection, d: { token?: string; intents?: number; compress?: boolean }): void {
    if (d.token !== this.#host.token) {
      connection.socket.close(4004, 'Authentication failed.');
      return;
    }
    this.identifies.push({ intents: d.intents ?? 0, compress: d.compress === true });
    connection.identified = true;
    this.#sessions += 1;
    this.#dispatch(connection, 'READY', {
      ...this.#host.ready(),
      session_id: `fake-session-${this.#sessions}`,
      resume_gateway_url: this.#host.wsUrl(),
      shard: [0, 1],
    });
    for (const guild of this.#host.guilds()) this.#dispatch(connection, 'GUILD_CREATE', guild);
  }

  #dispatch(connection: Connection, t: string, d: Record<string, unknown>): void {
    connection.seq += 1;
    this.#send(connection, { op: 0, d, s: connection.seq, t });
  }

  #send(connection: Connection, payload: Record<string, unknown>): void {
    connection.socket.send(JSON.stringify(payload));
  }
}

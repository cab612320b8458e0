// The Socket Mode side of the fake Slack: a WebSocket server (ws) at the URL apps.connections.open hands out. Each new
// connection gets Slack's `hello`, then every envelope not yet acknowledged (a redelivery after a reconnect carries a
// higher retry_attempt, like Slack's); envelopes pushed later go to the open connections. The app acknowledges an
// envelope by sending `{ envelope_id, payload? }` back; the fake records each acknowledgement.
import type { Server } from 'node:http';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';

/** The envelope types Socket Mode delivers. */
export type EnvelopeType = 'events_api' | 'slash_commands' | 'interactive';

/** One envelope as Slack sends it. */
export interface Envelope {
  envelope_id: string;
  type: EnvelopeType;
  payload: Record<string, unknown>;
  accepts_response_payload: boolean;
  retry_attempt: number;
  retry_reason: string;
}

/** An acknowledgement the app sent. */
export interface FakeAck {
  envelopeId: string;
  payload: unknown;
}

/** Socket Mode connections and envelopes for one fake. */
export class FakeSocketMode {
  readonly acks: FakeAck[] = [];
  /** Envelopes not acknowledged yet, by id. */
  readonly pending = new Map<string, Envelope>();
  /** Connections opened so far (each reconnect counts). */
  opened = 0;
  #wss: WebSocketServer;
  #sockets = new Set<WebSocket>();
  #ping: NodeJS.Timeout;
  #next = 0;

  constructor(server: Server, path: string) {
    this.#wss = new WebSocketServer({ server, path });
    this.#wss.on('connection', (socket) => this.#connected(socket));
    // Slack pings every few seconds; the client closes a connection whose server stays silent for 30 s.
    this.#ping = setInterval(() => {
      for (const socket of this.#sockets) socket.ping();
    }, 5_000);
    this.#ping.unref();
  }

  /** Connections open now. */
  get connections(): number {
    return this.#sockets.size;
  }

  /** Sends an envelope of `type` with `payload` to the open connections (and to later ones until acknowledged). */
  push(type: EnvelopeType, payload: Record<string, unknown>): string {
    this.#next += 1;
    const envelope: Envelope = {
      envelope_id: `env-${this.#next}`,
      type,
      payload,
      accepts_response_payload: type !== 'events_api',
      retry_attempt: 0,
      retry_reason: '',
    };
    this.pending.set(envelope.envelope_id, envelope);
    for (const socket of this.#sockets) socket.send(JSON.stringify(envelope));
    return envelope.envelope_id;
  }

  /** The acknowledgement of `envelopeId`, once there is one. */
  ackOf(envelopeId: string): FakeAck | undefined {
    return this.acks.find((a) => a.envelopeId === envelopeId);
  }

  /** Asks every connection to reconnect, as Slack does before recycling a server (`disconnect` message). */
  refresh(): void {
    for (const socket of this.#sockets)
      socket.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: { host: 'fake' } }));
  }

  async close(): Promise<void> {
    clearInterval(this.#ping);
    for (const socket of this.#sockets) socket.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  #connected(socket: WebSocket): void {
    this.opened += 1;
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => this.#sockets.delete(socket));
    socket.on('message', (data) => this.#received(String(data)));
    socket.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.#sockets.size,
        debug_info: { host: 'fake-slack', approximate_connection_time: 3600 },
        connection_info: { app_id: 'AFAKE' },
      }),
    );
    for (const envelope of this.pending.values()) {
      envelope.retry_attempt += 1;
      envelope.retry_reason = 'timeout';
      socket.send(JSON.stringify(envelope));
    }
  }

  #received(text: string): void {
    let message: { envelope_id?: unknown; payload?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (typeof message.envelope_id !== 'string') return;
    this.acks.push({ envelopeId: message.envelope_id, payload: message.payload });
    this.pending.delete(message.envelope_id);
  }
}

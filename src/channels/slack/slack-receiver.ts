// Bolt receivers that acknowledge to Slack only after the app's listeners finished, i.e. after the InboundHandler
// resolved: Bolt itself acknowledges an Events API event before its listeners run, which would lose a message that a
// crash cut off between the two. Socket Mode goes through Bolt's SocketModeReceiver (@slack/socket-mode over a
// WebSocket), its envelopes acknowledged by envelope_id once processed; the Events API over HTTP is handed its verified
// requests by the gateway (gateway/slack-routes.ts) and answers each with the HTTP response, which is the acknowledgement.
import type { App, Receiver, ReceiverEvent, SocketModeReceiverOptions } from '@slack/bolt';
import { SocketModeReceiver } from '@slack/bolt';
import { faultPoint } from '../../core/fault.ts';
import type { Logger } from '../../core/logger.ts';

/** The fault point right after Slack was told an event was received (crash tests). */
export const AFTER_ACK_FAULT = 'slack.intake.after-ack';

/**
 * Runs `event` through the app with its acknowledgement held back: the listeners' `ack(body)` only records the body,
 * and the real acknowledgement carries it once every listener resolved. Rejects, unacknowledged, when a listener threw
 * (Slack then delivers the event again).
 */
export async function processThenAck(app: App, event: ReceiverEvent): Promise<void> {
  let response: unknown;
  await app.processEvent({
    ...event,
    ack: async (body?: unknown) => {
      response = body;
    },
  });
  await event.ack(response);
  faultPoint(AFTER_ACK_FAULT);
}

/** Socket Mode: Bolt's SocketModeReceiver, its events processed (and only then acknowledged) by `processThenAck`. */
export class SlackSocketReceiver implements Receiver {
  #transport: SocketModeReceiver;

  constructor(options: SocketModeReceiverOptions, logger: Logger) {
    this.#transport = new SocketModeReceiver({
      ...options,
      // An envelope whose processing failed is left unacknowledged (Slack delivers it again); logged here, not as an error.
      processEventErrorHandler: async ({ error }) => {
        logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'Slack event not processed');
        return false;
      },
    });
  }

  /** Called by the App: the transport hands its events to a view of the app whose processEvent holds the ack back. */
  init(app: App): void {
    const deferred = Object.create(app) as App;
    deferred.processEvent = (event: ReceiverEvent) => processThenAck(app, event);
    this.#transport.init(deferred);
  }

  /** Opens the Socket Mode connection (apps.connections.open, then the WebSocket); resolves on Slack's hello. */
  async start(): Promise<void> {
    await this.#transport.start();
  }

  /** Closes the connection and stops reconnecting. */
  async stop(): Promise<void> {
    await this.#transport.client.disconnect();
  }
}

/** What the gateway answers Slack with for one request. */
export interface SlackHttpReply {
  status: number;
  contentType?: string;
  body: string;
}

/** A request Slack posted to POST /slack/events, whose signature the gateway already verified. */
export interface SlackHttpRequest {
  raw: Buffer;
  contentType: string | undefined;
  retryNum?: number;
  retryReason?: string;
}

/** The Events API over HTTP: the gateway hands it each verified request and sends back the reply. */
export class SlackHttpReceiver implements Receiver {
  #app: App | undefined;
  #running = false;

  init(app: App): void {
    this.#app = app;
  }

  async start(): Promise<void> {
    this.#running = true;
  }

  async stop(): Promise<void> {
    this.#running = false;
  }

  /**
   * Parses a verified request (JSON events; form-encoded interactivity `payload=…` and slash commands), answers
   * url_verification and ssl_check, and processes anything else through the app before answering 200 with what the
   * listener acknowledged with. 400 for a body it cannot read, 503 while stopped, 500 when processing failed (Slack
   * retries events).
   */
  async handle(request: SlackHttpRequest): Promise<SlackHttpReply> {
    const app = this.#app;
    if (!app || !this.#running) return { status: 503, body: 'not running' };
    const body = parseBody(request.raw, request.contentType);
    if (body === null) return { status: 400, body: 'unreadable body' };
    if (body.ssl_check !== undefined) return { status: 200, body: '' };
    if (body.type === 'url_verification' && typeof body.challenge === 'string')
      return { status: 200, contentType: 'application/json', body: JSON.stringify({ challenge: body.challenge }) };
    let reply: SlackHttpReply = { status: 200, body: '' };
    await processThenAck(app, {
      body,
      ...(request.retryNum !== undefined ? { retryNum: request.retryNum } : {}),
      ...(request.retryReason !== undefined ? { retryReason: request.retryReason } : {}),
      ack: async (response?: unknown) => {
        if (response === undefined || response === '') return;
        reply =
          typeof response === 'string'
            ? { status: 200, contentType: 'text/plain; charset=utf-8', body: response }
            : { status: 200, contentType: 'application/json', body: JSON.stringify(response) };
      },
    });
    return reply;
  }
}

type Body = Record<string, unknown>;

/** The request body as Bolt expects it, or null when it is neither JSON nor a form Slack sends. */
export function parseBody(raw: Buffer, contentType: string | undefined): Body | null {
  const text = raw.toString('utf8');
  try {
    if (contentType?.startsWith('application/x-www-form-urlencoded')) {
      const form = Object.fromEntries(new URLSearchParams(text));
      if (typeof form.payload === 'string') return asObject(JSON.parse(form.payload));
      return form;
    }
    return asObject(JSON.parse(text));
  } catch {
    return null;
  }
}

function asObject(value: unknown): Body | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Body) : null;
}

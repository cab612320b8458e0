// The Signal connector, through signal-cli's JSON-RPC daemon (`signal-cli daemon --http <host:port>`): messages are
// sent with the JSON-RPC `send` (`POST /api/v1/rpc`; the ref is the message's timestamp) and received from the event
// stream `GET /api/v1/events` (Server-Sent Events of `receive` notifications), read here with fetch and a small SSE
// reader, reconnecting with backoff. Each event is handled (signal-intake.ts) before the next is read, and its id is
// recorded only after the handler resolved; a reconnect names that id in `Last-Event-ID`, so signal-cli (versions
// that keep their last 1000 events) replays what came after it. Signal has no buttons, threads or (here) edits:
// buttons become a numbered list and a reply of the number stands for the button (signal-menus.ts).
import { backoffDelay } from '../../core/backoff.ts';
import type { Clock, Timer } from '../../core/clock.ts';
import type { SignalAccountConfig } from '../../core/config-signal.ts';
import type { Logger } from '../../core/logger.ts';
import type { ChannelTarget, Connector, InboundHandler, OutboundMessage, SentMessage } from '../connector.ts';
import { StopSignal } from '../stop-signal.ts';
import { allowedNumbersKey, quoteOf, recipientOf } from './signal-inbound.ts';
import { SignalIntake } from './signal-intake.ts';
import { renderMenu } from './signal-menus.ts';
import { SignalRpc } from './signal-rpc.ts';
import { SignalState } from './signal-state.ts';
import { readSse } from './sse-reader.ts';

/**
 * Longest text of one message. Signal's clients send text over 2000 bytes as a "long text" attachment (signal-cli does
 * the same); 2000 keeps every part an ordinary message (a numbered list under the last part may add a little).
 */
export const SIGNAL_MAX_MESSAGE_LENGTH = 2_000;

export interface SignalConnectorDeps {
  clock: Clock;
  logger: Logger;
  /** Where the connector keeps its state file (last handled event, numbered lists); null or absent: memory only. */
  stateDir?: string | null;
  /** Source of jitter in [0, 1); default Math.random. */
  random?: () => number;
}

/** One Signal account (number) as a Connector. */
export class SignalConnector implements Connector {
  readonly channel = 'signal';
  readonly account: string | undefined;
  readonly threads = false;
  readonly maxMessageLength = SIGNAL_MAX_MESSAGE_LENGTH;
  /** `send` has no idempotency key: a send a crash interrupted cannot be told apart from one that went out. */
  readonly idempotent = false;
  #config: SignalAccountConfig;
  #deps: SignalConnectorDeps;
  #logger: Logger;
  #rpc: SignalRpc;
  #state: SignalState;
  #intake: SignalIntake;
  #running = false;
  #abort = new AbortController();
  #stop = new StopSignal();
  #loop: Promise<void> | null = null;
  #connected = false;

  /** `account`: the name under `channels.signal.accounts` (absent for the default account). */
  constructor(config: SignalAccountConfig, account: string | undefined, deps: SignalConnectorDeps) {
    this.#config = config;
    this.account = account;
    this.#deps = deps;
    this.#logger = deps.logger.child({ channel: 'signal', ...(account ? { account } : {}) });
    this.#rpc = new SignalRpc({
      url: config.url,
      ...(config.account ? { account: config.account } : {}),
      timeoutMs: config.requestTimeoutMs,
      clock: deps.clock,
    });
    this.#state = new SignalState(deps.stateDir ?? null, account ?? 'default');
    this.#intake = new SignalIntake({
      clock: deps.clock,
      logger: this.#logger,
      rpc: this.#rpc,
      state: this.#state,
      account,
      allowed: new Set(config.allowedNumbers),
      maxAttempts: config.inboundMaxAttempts,
      stopSignal: () => this.#stop,
      retryDelay: (attempt) => this.#retryDelay(attempt),
    });
  }

  /** True while the event stream is open (for tests and health). */
  get connected(): boolean {
    return this.#connected;
  }

  /** Loads the kept state and starts reading the event stream in the background (never throws for an absent daemon). */
  async start(onMessage: InboundHandler): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#abort = new AbortController();
    this.#stop = new StopSignal();
    const problem = await this.#state.load();
    if (problem) this.#logger.warn({ err: problem }, 'Signal state file unreadable; starting without it');
    if (this.#config.allowedNumbers.length === 0)
      this.#logger.warn(`${allowedNumbersKey(this.account)} is empty: every sender will be refused`);
    this.#loop = this.#read(onMessage).catch((error: unknown) => {
      this.#logger.error({ err: describe(error) }, 'Signal event stream stopped by an unexpected error');
    });
  }

  /** Closes the stream; a message whose hand-off was in flight is not recorded as handled (it is replayed). */
  async stop(): Promise<void> {
    if (this.#running) {
      this.#running = false;
      this.#stop.stop();
      this.#abort.abort();
    }
    await this.#loop;
    this.#loop = null;
    try {
      await this.#state.flush();
    } catch (error) {
      this.#logger.warn({ err: describe(error) }, 'could not write the Signal state file on stop');
    }
  }

  /**
   * Sends one message to a number or a group (`group.<id>`), quoting the message it answers when `replyTo` names one,
   * with its buttons as a numbered list (remembered for the conversation); resolves to `{ ref: <timestamp> }`. Throws
   * DeliveryError (permanent for an unknown recipient or group).
   */
  async send(target: ChannelTarget, message: OutboundMessage): Promise<SentMessage> {
    const menu = renderMenu(message.text, message.buttons);
    const quote = quoteOf(message.replyTo);
    const result = await this.#rpc.send(recipientOf(target), menu.text, quote);
    if (menu.commands.length > 0) await this.#state.remember(target.chat, menu.commands);
    return { ref: String(result.timestamp) };
  }

  /** Shows "typing…" in the conversation (signal-cli's sendTyping; best effort: failures are only logged). */
  async typing(target: ChannelTarget): Promise<void> {
    try {
      await this.#rpc.typing(recipientOf(target));
    } catch (error) {
      this.#logger.debug({ err: describe(error) }, 'could not show typing');
    }
  }

  #retryDelay(failures: number): number {
    return backoffDelay(failures, this.#config.retryBaseDelayMs, this.#config.retryMaxDelayMs, this.#deps.random);
  }

  /** Opens the stream, handles its events one by one, and reconnects with backoff whenever it fails or ends. */
  async #read(onMessage: InboundHandler): Promise<void> {
    let failures = 0;
    while (this.#running) {
      const connection = new AbortController();
      const idleMs = this.#config.streamIdleTimeoutMs;
      // signal-cli writes a keep-alive every 15 s: a stream silent for longer is dead (a half-open connection).
      let idle: Timer | null = null;
      const watch = (on: boolean): void => {
        idle?.cancel();
        idle = on
          ? this.#deps.clock.after(idleMs, () => connection.abort(new Error(`no data for ${idleMs} ms`)))
          : null;
      };
      try {
        const body = await this.#open(AbortSignal.any([this.#abort.signal, connection.signal]));
        if (failures > 0) this.#logger.info({ failures }, 'Signal event stream reconnected');
        failures = 0;
        this.#connected = true;
        watch(true);
        for await (const event of readSse(body, { onChunk: () => watch(true) })) {
          // The watchdog rests while a message is handed over (the handler may take its time).
          watch(false);
          if (!this.#running || !(await this.#intake.handle(event, onMessage))) return;
          watch(true);
        }
        if (!this.#running) return;
        this.#logger.warn('Signal event stream ended; reconnecting');
      } catch (error) {
        if (!this.#running) return;
        const err = describe(connection.signal.aborted ? connection.signal.reason : error);
        this.#logger.warn({ err, failures: failures + 1 }, 'Signal event stream failed; reconnecting');
      } finally {
        watch(false);
        connection.abort();
        this.#connected = false;
      }
      failures += 1;
      await this.#stop.sleep(this.#deps.clock, this.#retryDelay(failures));
    }
  }

  /** GET /api/v1/events (for this account, after the last handled event); throws unless it answers 200. */
  async #open(signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const url = new URL('/api/v1/events', this.#config.url);
    if (this.#config.account) url.searchParams.set('account', this.#config.account);
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    const last = this.#state.lastEventId;
    if (last !== undefined) headers['last-event-id'] = last;
    const response = await fetch(url, { headers, signal });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new Error(`signal-cli answered HTTP ${response.status} to GET /api/v1/events`);
    }
    return response.body;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// The contract every chat connector (web, telegram, …) implements, and the one place channel strings are parsed.
// A channel string is the seed's `channel|target` or `channel|account|target` form, optionally with a thread as a fourth
// segment (`telegram||-100123|42`, account left empty). Everything above channels/ passes ChannelTargets, not strings.

/** Where a message goes: a conversation on one connector. */
export interface ChannelTarget {
  /** Connector name: `web`, `telegram`, … */
  channel: string;
  /** Account of the connector (a second bot, a workspace); absent for the default one. */
  account?: string;
  /** Conversation id on that connector (a Telegram chat id, a web chat id). */
  chat: string;
  /** Thread or topic inside the conversation. */
  thread?: string;
}

/** A message a person sent to a connector. */
export interface InboundMessage {
  /** Connector-unique message id; the same message delivered twice carries the same id (used to deduplicate). */
  id: string;
  /** Where replies to this message go. */
  target: ChannelTarget;
  /** The sender's id on the connector (a Telegram user id). */
  userId: string;
  userName?: string;
  text: string;
  receivedAt: number;
  /**
   * Set when the person pressed a button of an earlier message rather than typing: `text` is then the button's
   * `command`, handled exactly like the typed command (same allow-list, same durable intake).
   */
  pressed?: boolean;
}

/** A button under a message. Pressing it sends `command` as if the person had typed it (e.g. `/approve k3x9 session`). */
export interface ChatButton {
  label: string;
  /** The chat command the button stands for; at most 64 bytes (Telegram's callback_data limit). */
  command: string;
}

/**
 * A file sent with a message (a session's patch). Text content (UTF-8), at most MAX_FILE_BYTES once recorded (the
 * outbox cuts a larger one with a last line saying so). A connector with `files` sends it as a document of its own
 * with the message; elsewhere the outbox sends `inline` (default: the text, then the content in a code fence) instead.
 */
export interface OutboundFile {
  /** The name people see (`worker.patch`): no path separators or control characters. */
  name: string;
  /** Its MIME type (`text/x-diff`). */
  contentType: string;
  content: string;
  /** What to send instead of the message's text and the file on a connector that cannot send files. */
  inline?: string;
}

/** A message to send. `text` may exceed the connector's limit; the connector (or the router) splits it. */
export interface OutboundMessage {
  text: string;
  /**
   * A file sent with the message, on its last part (the text is its caption or the message before it). Only given to
   * connectors with `files`; a message with a file is never delivered as an edit.
   */
  file?: OutboundFile;
  /** Connector message id this answers, when there is one. */
  replyTo?: string;
  /** Rows of buttons shown under the message (on its last part), where the channel has buttons. */
  buttons?: ChatButton[][];
  /**
   * Outbox key of an earlier message whose thread this one goes in (a coding session's messages in the thread its
   * launch line opened). On a connector with `threads`, the outbox sends it to that message's thread (the target's
   * `thread` set to the earlier message's ref); elsewhere, or while that ref is unknown, to the conversation itself.
   */
  threadOf?: string;
  /**
   * Outbox key of an earlier message this one replaces: the connector edits that message in place (text, and its
   * buttons replaced by `buttons` or removed) where it can; otherwise this is sent as a new message.
   */
  replaces?: string;
}

/** What a connector answers for a sent message: its own id of it, which a later edit names. */
export interface SentMessage {
  ref: string;
}

/** What the outbox passes with each send: a key that is the same on every attempt of the same part of one message. */
export interface DeliveryKey {
  key: string;
}

/**
 * Resolves once the message is durably accepted (or refused with a reply already sent). A connector must not
 * acknowledge a message to its service (e.g. advance the Telegram update offset) before this resolves.
 */
export type InboundHandler = (message: InboundMessage) => Promise<void>;

/** One chat connector. */
export interface Connector {
  /** The channel name it serves (`web`, `telegram`, `slack`, …). */
  readonly channel: string;
  /**
   * The account it serves, when the channel has several (`channels.<name>.accounts.<account>`): targets naming it
   * (`slack|work|C123`) go to this connector. Absent for a channel's only (default) account.
   */
  readonly account?: string;
  /**
   * True when a message can open a thread that later messages go in (Slack's thread_ts, a Discord thread started from
   * a message): `send` then accepts `target.thread` = the ref of the message that opened it.
   */
  readonly threads?: boolean;
  /**
   * True when `send` takes a message's `file` and sends it as a document (Telegram, Slack, Discord). Absent or false:
   * the outbox sends the file's `inline` form as text instead and never passes a file.
   */
  readonly files?: boolean;
  /**
   * Longest text that may go with a file (Telegram's caption: 1,024). When a message's last part is longer, the outbox
   * sends it alone and the file as one more part with an empty text. Absent: any part may carry the file.
   */
  readonly maxFileCaptionLength?: number;
  /** Longest text one message may carry on this channel. */
  readonly maxMessageLength: number;
  /** Starts receiving; every inbound message goes to `onMessage`. */
  start(onMessage: InboundHandler): Promise<void>;
  /**
   * True when sending twice under the same delivery key delivers once (the web transcript keeps the key): the outbox
   * then resends a message a crash interrupted mid-send. False (Telegram: no idempotency key) means such a message is
   * dead-lettered instead (at most once).
   */
  readonly idempotent: boolean;
  /**
   * Sends one message (already within maxMessageLength); throws on failure so the caller can retry. An idempotent
   * connector delivers a second send under the same `delivery.key` at most once.
   */
  send(target: ChannelTarget, message: OutboundMessage, delivery?: DeliveryKey): Promise<SentMessage | void>;
  /**
   * Replaces the text (and buttons) of a message this connector sent earlier (`ref` from `send`); throws on failure.
   * Absent on channels that cannot edit: the outbox then sends the replacement as a new message.
   */
  edit?(target: ChannelTarget, ref: string, message: OutboundMessage): Promise<void>;
  /** Shows a "typing…" indicator in the conversation, where the channel has one (best effort, never throws). */
  typing?(target: ChannelTarget): Promise<void>;
  stop(): Promise<void>;
}

const SAFE_SEGMENT = /^[^|\s]+$/;

/**
 * Parses a channel string: `channel|target`, `channel|account|target` or `channel|account|target|thread` (account may
 * be empty). A bare number is a Telegram chat id. Returns null for "unknown", empty or malformed strings.
 */
export function parseTarget(text: string | null | undefined): ChannelTarget | null {
  const value = text?.trim() ?? '';
  if (!value || value === 'unknown') return null;
  if (/^-?\d+$/.test(value)) return { channel: 'telegram', chat: value };
  const parts = value.split('|');
  if (parts.length < 2 || parts.length > 4) return null;
  const [channel = '', a = '', b, c] = parts;
  const [account, chat, thread] = parts.length === 2 ? ['', a, undefined] : [a, b ?? '', c];
  if (!SAFE_SEGMENT.test(channel) || !SAFE_SEGMENT.test(chat)) return null;
  if (account && !SAFE_SEGMENT.test(account)) return null;
  if (thread !== undefined && !SAFE_SEGMENT.test(thread)) return null;
  return { channel, chat, ...(account ? { account } : {}), ...(thread ? { thread } : {}) };
}

/** Formats a target back to its channel string (the inverse of parseTarget). */
export function formatTarget(target: ChannelTarget): string {
  if (target.thread) return `${target.channel}|${target.account ?? ''}|${target.chat}|${target.thread}`;
  if (target.account) return `${target.channel}|${target.account}|${target.chat}`;
  return `${target.channel}|${target.chat}`;
}

/** True when two targets name the same conversation. */
export function sameTarget(a: ChannelTarget, b: ChannelTarget): boolean {
  return formatTarget(a) === formatTarget(b);
}

/**
 * Outbound delivery as the rest of the daemon sees it: `send` records the message durably and returns at once; delivery
 * (splitting to the connector's limit, retries with backoff) happens in the background and never blocks the caller.
 * A target whose channel has no connector is logged and counted, never dropped silently.
 */
export interface Outbox {
  /**
   * Records the message for delivery; resolves once it is durable (acknowledge after awaiting it). Messages are
   * recorded in call order. With `options.key`, a second send under the same key is a no-op (the message is recorded
   * once, even across restarts): callers that may repeat a send after a crash give one.
   */
  send(target: ChannelTarget, message: OutboundMessage, options?: SendOptions): Promise<void>;
}

/** Options of `Outbox.send`. */
export interface SendOptions {
  /** Idempotency key of the message: unique per message, stable across retries and restarts. */
  key?: string;
  /**
   * A message only the holder of the lease guarding the outbox may record (the engine's replies in a cluster): recorded
   * in one transaction with that lease's fence, so a node that lost the lease (stalled past it) records nothing and the
   * send rejects with `FencedError` (store/cluster-fence.ts). No effect where the outbox has no fence (SQLite).
   */
  fenced?: boolean;
}

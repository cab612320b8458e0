// What the Discord connector sends, through discord.js's REST client: messages (Discord markdown, mentions never
// pinging) with their buttons as message components and their file as an attachment (a multipart upload), into a thread started from a message when the target names one
// (the thread is created on first use), the reply to a slash command as the edit of its deferred response, edits of
// sent messages, "typing…" and the connector's own replies. A message's ref is its id, or `<thread>:<id>` when it was
// posted in a thread rather than in the target's channel (so an edit finds it).
import { createHash } from 'node:crypto';
import type { RawFile, REST } from 'discord.js';
import { Routes } from 'discord.js';
import type { Logger } from '../../core/logger.ts';
import type {
  ChannelTarget,
  ChatButton,
  DeliveryKey,
  OutboundFile,
  OutboundMessage,
  SentMessage,
} from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { EditRefusedError } from '../outbox-edit.ts';
import { describeDiscordError, DiscordCode, discordCode, toDeliveryError } from './discord-errors.ts';
import { parseReplyTo } from './discord-inbound.ts';
import { toDiscordMarkdown } from './discord-markdown.ts';
import type { PendingCommands } from './discord-pending.ts';

/** Discord's limit on the content of one message. */
export const DISCORD_MAX_MESSAGE_LENGTH = 2000;
/** Discord's limit on a button's custom_id (the command it stands for). */
export const DISCORD_MAX_CUSTOM_ID = 100;
const MAX_LABEL = 80;
const MAX_ROWS = 5;
const PER_ROW = 5;
/** Buttons are grey (secondary); Discord has no neutral-primary choice that suits every command. */
const SECONDARY = 2;

type Components = { type: 1; components: { type: 2; style: number; label: string; custom_id: string }[] }[];

/**
 * Rows of buttons as action rows of message components (custom_id = the command; a row of more than five is wrapped),
 * or an empty list. Throws a permanent DeliveryError for buttons Discord would refuse: an empty label, a command empty
 * or over 100 characters, the same command twice, more than 25 buttons.
 */
export function actionRows(buttons: ChatButton[][] | undefined): Components {
  const rows: Components = [];
  const seen = new Set<string>();
  for (const row of buttons ?? []) {
    for (let i = 0; i < row.length; i += PER_ROW) {
      rows.push({
        type: 1,
        components: row.slice(i, i + PER_ROW).map((button) => {
          const id = button.command;
          if (button.label.trim() === '' || id.length === 0 || id.length > DISCORD_MAX_CUSTOM_ID || seen.has(id)) {
            throw new DeliveryError(
              `button "${button.label}": a label and a command of 1-${DISCORD_MAX_CUSTOM_ID} characters, unique in the message, are needed`,
              { kind: 'permanent' },
            );
          }
          seen.add(id);
          return { type: 2, style: SECONDARY, label: button.label.slice(0, MAX_LABEL), custom_id: id };
        }),
      });
    }
  }
  if (rows.length > MAX_ROWS)
    throw new DeliveryError(`${rows.length} rows of buttons: Discord shows at most ${MAX_ROWS}`, { kind: 'permanent' });
  return rows;
}

/** A nonce (at most 25 characters) for a delivery key: Discord creates one message per nonce (enforce_nonce). */
export function nonceOf(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 25);
}

/** A message's file as the REST client's multipart upload (`files[0]`) and the body's `attachments` entry naming it. */
function upload(file: OutboundFile | undefined): { files: RawFile[]; attachments: { id: number; filename: string }[] } {
  if (!file) return { files: [], attachments: [] };
  const data = Buffer.from(file.content, 'utf8');
  return {
    files: [{ name: file.name, data, contentType: file.contentType }],
    attachments: [{ id: 0, filename: file.name }],
  };
}

/** Mentions in the text never ping anyone (an agent's output may hold @everyone). */
const NO_PINGS = { parse: [], replied_user: false };

/** Discord's outbound calls for one bot. */
export class DiscordOutbound {
  #rest: REST;
  #logger: Logger;
  #pending: PendingCommands;
  /** Threads known to exist (created, or seen in an event). */
  #threads = new Set<string>();
  /** Channels where no thread can be started (DMs): their threaded messages go in the channel itself. */
  #flat = new Set<string>();

  constructor(rest: REST, options: { logger: Logger; pending: PendingCommands }) {
    this.#rest = rest;
    this.#logger = options.logger;
    this.#pending = options.pending;
  }

  /** Notes that `threadId` exists (a message came from it), so sends go straight into it. */
  knowThread(threadId: string): void {
    this.#threads.add(threadId);
  }

  /**
   * Sends one message (at most 2,000 characters): the reply to a slash command fills its deferred response while its
   * token is fresh; anything else is posted (in the target's thread when it names one), once per delivery key. Its
   * file is attached (multipart: `payload_json` and `files[0]`).
   */
  async send(target: ChannelTarget, message: OutboundMessage, delivery?: DeliveryKey): Promise<SentMessage> {
    if (message.text.length > DISCORD_MAX_MESSAGE_LENGTH)
      throw new DeliveryError(
        `message of ${message.text.length} characters exceeds Discord's ${DISCORD_MAX_MESSAGE_LENGTH}`,
        { kind: 'permanent' },
      );
    const { files, attachments } = upload(message.file);
    const body = {
      content: toDiscordMarkdown(message.text),
      components: actionRows(message.buttons),
      ...(files.length > 0 ? { attachments } : {}),
    };
    const reply = parseReplyTo(message.replyTo);
    if (reply?.kind === 'command') {
      const filled = await this.#fillResponse(message.replyTo as string, body, files);
      if (filled) return { ref: refOf(target, filled.channelId, filled.id) };
    }
    const channelId = await this.#channelOf(target, message.text);
    const reference =
      reply?.kind === 'message' && reply.channelId === channelId
        ? { message_reference: { message_id: reply.messageId, fail_if_not_exists: false } }
        : {};
    const nonce = delivery ? { nonce: nonceOf(delivery.key), enforce_nonce: true } : {};
    try {
      const sent = (await this.#rest.post(Routes.channelMessages(channelId), {
        body: { ...body, allowed_mentions: NO_PINGS, ...reference, ...nonce },
        ...(files.length > 0 ? { files } : {}),
      })) as { id: string };
      return { ref: refOf(target, channelId, sent.id) };
    } catch (error) {
      throw toDeliveryError(error);
    }
  }

  /**
   * Replaces the text and buttons of message `ref` (no buttons: the components are removed). A message Discord will
   * not edit (deleted, not the bot's, its channel gone) throws EditRefusedError.
   */
  async edit(target: ChannelTarget, ref: string, message: OutboundMessage): Promise<void> {
    const m = /^(?:(\d+):)?(\d+)$/.exec(ref);
    if (!m) throw new EditRefusedError(`"${ref}" is not a Discord message ref`);
    const channelId = m[1] ?? target.chat;
    const body = {
      content: toDiscordMarkdown(message.text.slice(0, DISCORD_MAX_MESSAGE_LENGTH)),
      components: actionRows(message.buttons),
      allowed_mentions: NO_PINGS,
    };
    try {
      await this.#rest.patch(Routes.channelMessage(channelId, m[2] as string), { body });
    } catch (error) {
      const code = discordCode(error);
      if (
        code === DiscordCode.unknownMessage ||
        code === DiscordCode.unknownChannel ||
        code === DiscordCode.cannotEditOthers
      )
        throw new EditRefusedError(describeDiscordError(error), { status: 404, cause: error });
      throw toDeliveryError(error);
    }
  }

  /** Shows "typing…" where the target's messages go (best effort: failures are only logged). */
  async typing(target: ChannelTarget): Promise<void> {
    const channelId = target.thread && this.#threads.has(target.thread) ? target.thread : target.chat;
    try {
      await this.#rest.post(Routes.channelTyping(channelId));
    } catch (error) {
      this.#logger.debug({ chat: target.chat, err: describeDiscordError(error) }, 'typing indicator failed');
    }
  }

  /** A plain reply the connector sends itself (refusals, notices) in `channelId`; failures are logged, not retried. */
  async replyDirect(channelId: string, text: string, replyTo?: string): Promise<void> {
    const reference = replyTo ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {};
    try {
      await this.#rest.post(Routes.channelMessages(channelId), {
        body: { content: text, allowed_mentions: NO_PINGS, ...reference },
      });
    } catch (error) {
      this.#logger.warn({ chat: channelId, err: describeDiscordError(error) }, 'could not send a reply');
    }
  }

  /** Fills the deferred response of the slash command `inboundId`; undefined when it cannot (send anew instead). */
  async #fillResponse(
    inboundId: string,
    body: object,
    files: RawFile[],
  ): Promise<{ id: string; channelId: string } | undefined> {
    const command = this.#pending.take(inboundId);
    if (!command || !(await command.acked)) return undefined;
    try {
      const route = Routes.webhookMessage(command.applicationId, command.token, '@original');
      const sent = (await this.#rest.patch(route, {
        body: { ...body, allowed_mentions: NO_PINGS },
        auth: false,
        ...(files.length > 0 ? { files } : {}),
      })) as { id: string };
      return { id: sent.id, channelId: command.channelId };
    } catch (error) {
      const code = discordCode(error);
      const gone = [
        DiscordCode.unknownWebhook,
        DiscordCode.invalidWebhookToken,
        DiscordCode.unknownInteraction,
        DiscordCode.unknownMessage,
      ] as number[];
      if (code !== undefined && gone.includes(code)) {
        this.#logger.info({ err: describeDiscordError(error) }, 'the command response is gone; replying anew');
        return undefined;
      }
      throw toDeliveryError(error);
    }
  }

  /**
   * The channel a message to `target` is posted in: its thread when it names one (started from the message of that
   * id, on first use), else the channel itself; a channel without threads (a DM) or a thread that cannot be started
   * (its message deleted) falls back to the channel.
   */
  async #channelOf(target: ChannelTarget, text: string): Promise<string> {
    const thread = target.thread;
    if (!thread) return target.chat;
    const posted = /^(\d+):\d+$/.exec(thread);
    if (posted) return posted[1] as string;
    if (this.#threads.has(thread)) return thread;
    if (this.#flat.has(target.chat)) return target.chat;
    try {
      await this.#rest.post(Routes.threads(target.chat, thread), {
        body: { name: await this.#threadName(target.chat, thread, text), auto_archive_duration: 1440 },
      });
    } catch (error) {
      const code = discordCode(error);
      if (code === DiscordCode.wrongChannelType) this.#flat.add(target.chat);
      if (code === DiscordCode.wrongChannelType || code === DiscordCode.unknownMessage) {
        this.#logger.debug(
          { chat: target.chat, thread, err: describeDiscordError(error) },
          'no thread; in the channel',
        );
        return target.chat;
      }
      if (code !== DiscordCode.threadExists) throw toDeliveryError(error);
    }
    this.#threads.add(thread);
    return thread;
  }

  /** A thread's name: the first line of the message it starts from (else of the first message in it), ≤ 100 chars. */
  async #threadName(channelId: string, messageId: string, fallback: string): Promise<string> {
    let text = fallback;
    try {
      const starter = (await this.#rest.get(Routes.channelMessage(channelId, messageId))) as { content?: string };
      if (starter.content) text = starter.content;
    } catch (error) {
      this.#logger.debug({ err: describeDiscordError(error) }, 'could not read the message a thread starts from');
    }
    const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
    return (
      line
        .replace(/[*_`~>#]/g, '')
        .trim()
        .slice(0, 100) || 'switchboard'
    );
  }
}

function refOf(target: ChannelTarget, channelId: string, messageId: string): string {
  return channelId === target.chat ? messageId : `${channelId}:${messageId}`;
}

// The fake Discord's REST routes (API v10 under /api/v10), answered from and written to its state: the gateway URL,
// the bot user, guild command registration, channel messages (create with nonce/enforce_nonce and attached files, see
// fake-discord-files.ts; fetch, edit), threads
// started from a message, typing, interaction callbacks and the edit of an interaction's original response. Errors
// are Discord's JSON errors ({code, message}) with its status codes.
import type { FakeAttachment } from './fake-discord-files.ts';
import type { FakeChannel, FakeMessage, WireUser } from './fake-discord-objects.ts';
import { channelObject, messageObject, parseComponents } from './fake-discord-objects.ts';

/** One answer of a route. */
export interface RestAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** An interaction the fake dispatched, and how the bot answered it. */
export interface FakeInteraction {
  id: string;
  token: string;
  channelId: string;
  /** The message pressed (components). */
  messageId?: string;
  /** The callback types the bot posted, in order (4 reply, 5 deferred reply, 6 deferred update, 7 update). */
  callbacks: { type: number; content?: string; ephemeral: boolean }[];
  /** The original response's message, once there is one. */
  originalId?: string;
}

/** The state the routes work on (the fake itself). */
export interface RestState {
  token: string;
  applicationId: string;
  bot: WireUser;
  wsUrl(): string;
  channels: Map<string, FakeChannel>;
  messages: Map<string, FakeMessage>;
  interactions: Map<string, FakeInteraction>;
  commands: Map<string, { name: string; description: string; options?: unknown[] }[]>;
  sent: FakeMessage[];
  edits: { channelId: string; messageId: string; content: string; buttons: FakeMessage['buttons'] }[];
  threads: FakeChannel[];
  typing: string[];
  nextId(): string;
  now(): string;
  dispatch(t: string, d: Record<string, unknown>): void;
}

type Body = Record<string, unknown>;

const error = (status: number, code: number, message: string): RestAnswer => ({ status, body: { code, message } });
const unknownChannel = (): RestAnswer => error(404, 10003, 'Unknown Channel');
const unknownMessage = (): RestAnswer => error(404, 10008, 'Unknown Message');

/** Answers one REST request (`path` below /api/v10, with its query). */
export function handleRest(
  state: RestState,
  method: string,
  url: URL,
  body: Body,
  auth: string,
  files: FakeAttachment[] = [],
): RestAnswer {
  const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
  let m: RegExpExecArray | null;
  if ((m = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path)) && method === 'POST')
    return callback(state, m[1] as string, m[2] as string, body, url.searchParams.get('with_response') === 'true');
  if ((m = /^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/.exec(path)) && method === 'PATCH')
    return editOriginal(state, m[1] as string, m[2] as string, body, files);
  if (auth !== `Bot ${state.token}`) return error(401, 0, '401: Unauthorized');
  if (path === '/gateway/bot' && method === 'GET') {
    const limit = { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 };
    return { status: 200, body: { url: state.wsUrl(), shards: 1, session_start_limit: limit } };
  }
  if (path === '/users/@me' && method === 'GET') return { status: 200, body: state.bot };
  if ((m = /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/.exec(path)) && method === 'PUT')
    return registerCommands(state, m[1] as string, m[2] as string, body);
  if ((m = /^\/channels\/(\d+)\/messages$/.exec(path)) && method === 'POST')
    return create(state, m[1] as string, body, files);
  if ((m = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path))) {
    const message = state.messages.get(m[2] as string);
    if (!state.channels.has(m[1] as string)) return unknownChannel();
    if (!message || message.channelId !== m[1]) return unknownMessage();
    if (method === 'GET') return { status: 200, body: messageObject(message, state.now()) };
    if (method === 'PATCH') return edit(state, message, body);
  }
  if ((m = /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/.exec(path)) && method === 'POST')
    return startThread(state, m[1] as string, m[2] as string, body);
  if ((m = /^\/channels\/(\d+)\/typing$/.exec(path)) && method === 'POST') {
    if (!state.channels.has(m[1] as string)) return unknownChannel();
    state.typing.push(m[1] as string);
    return { status: 204 };
  }
  return error(404, 0, `404: Not Found (${method} ${path})`);
}

function registerCommands(state: RestState, app: string, guild: string, body: Body): RestAnswer {
  if (app !== state.applicationId) return error(403, 50001, 'Missing Access');
  const list = Array.isArray(body) ? (body as { name: string; description: string; options?: unknown[] }[]) : null;
  if (!list || list.length > 100) return error(400, 50035, 'Invalid Form Body');
  for (const c of list) {
    if (!/^[-_\p{L}\p{N}]{1,32}$/u.test(c.name) || c.name !== c.name.toLowerCase())
      return error(400, 50035, `Invalid Form Body (name ${c.name})`);
    if (typeof c.description !== 'string' || c.description.length < 1 || c.description.length > 100)
      return error(400, 50035, `Invalid Form Body (description of ${c.name})`);
  }
  state.commands.set(guild, list);
  return { status: 200, body: list.map((c) => ({ ...c, id: state.nextId(), application_id: app, guild_id: guild })) };
}

/** Checks content and components as Discord does; an error answer or the parsed parts. */
function readContent(body: Body): RestAnswer | { content: string; buttons: FakeMessage['buttons'] } {
  const content = typeof body.content === 'string' ? body.content : '';
  if (content.length > 2000) return error(400, 50035, 'Invalid Form Body (content: Must be 2000 or fewer in length.)');
  const buttons = parseComponents(body.components);
  if (typeof buttons === 'string') return error(400, 50035, `Invalid Form Body (${buttons})`);
  return { content, buttons };
}

function create(state: RestState, channelId: string, body: Body, files: FakeAttachment[]): RestAnswer {
  const channel = state.channels.get(channelId);
  if (!channel) return unknownChannel();
  const parts = readContent(body);
  if ('status' in parts) return parts;
  if (parts.content === '' && parts.buttons.length === 0 && files.length === 0)
    return error(400, 50006, 'Cannot send an empty message');
  const nonce = typeof body.nonce === 'string' || typeof body.nonce === 'number' ? String(body.nonce) : undefined;
  if (nonce && body.enforce_nonce === true) {
    const earlier = state.sent.find((s) => s.channelId === channelId && s.nonce === nonce);
    if (earlier) return { status: 200, body: messageObject(earlier, state.now()) };
  }
  const reference = (body.message_reference as { message_id?: string } | undefined)?.message_id;
  const message: FakeMessage = {
    id: state.nextId(),
    channelId,
    ...(channel.guildId ? { guildId: channel.guildId } : {}),
    author: state.bot,
    content: parts.content,
    buttons: parts.buttons,
    ...(reference ? { replyTo: reference } : {}),
    ...(nonce ? { nonce } : {}),
    ...(files.length > 0 ? { attachments: files } : {}),
    flags: 0,
  };
  state.messages.set(message.id, message);
  state.sent.push(message);
  const wire = messageObject(message, state.now());
  state.dispatch('MESSAGE_CREATE', { ...wire, channel_type: channel.type });
  return { status: 200, body: wire };
}

function edit(state: RestState, message: FakeMessage, body: Body): RestAnswer {
  if (message.author.id !== state.bot.id) return error(403, 50005, 'Cannot edit a message authored by another user');
  const parts = readContent(body);
  if ('status' in parts) return parts;
  if (typeof body.content === 'string') message.content = parts.content;
  if (body.components !== undefined) message.buttons = parts.buttons;
  message.editedAt = state.now();
  state.edits.push({
    channelId: message.channelId,
    messageId: message.id,
    content: message.content,
    buttons: message.buttons,
  });
  return { status: 200, body: messageObject(message, state.now()) };
}

function startThread(state: RestState, channelId: string, messageId: string, body: Body): RestAnswer {
  const channel = state.channels.get(channelId);
  if (!channel) return unknownChannel();
  if (channel.type !== 0) return error(400, 50024, 'Cannot execute action on this channel type');
  const message = state.messages.get(messageId);
  if (!message || message.channelId !== channelId) return unknownMessage();
  if (state.channels.has(messageId)) return error(400, 160004, 'A thread has already been created for this message');
  if (typeof body.name !== 'string' || body.name.length < 1 || body.name.length > 100)
    return error(400, 50035, 'Invalid Form Body (name: 1-100)');
  const thread: FakeChannel = {
    id: messageId,
    type: 11,
    ...(channel.guildId ? { guildId: channel.guildId } : {}),
    name: body.name,
    parentId: channelId,
    ownerId: state.bot.id,
  };
  state.channels.set(thread.id, thread);
  state.threads.push(thread);
  state.dispatch('THREAD_CREATE', { ...channelObject(thread), newly_created: true });
  return { status: 201, body: channelObject(thread) };
}

function callback(state: RestState, id: string, token: string, body: Body, withResponse: boolean): RestAnswer {
  const interaction = state.interactions.get(id);
  if (!interaction || interaction.token !== token) return error(404, 10062, 'Unknown interaction');
  if (interaction.callbacks.length > 0) return error(400, 40060, 'Interaction has already been acknowledged.');
  const type = Number(body.type);
  const data = (body.data ?? {}) as Body;
  const ephemeral = (Number(data.flags ?? 0) & 64) !== 0;
  const content = typeof data.content === 'string' ? data.content : undefined;
  interaction.callbacks.push({ type, ephemeral, ...(content !== undefined ? { content } : {}) });
  if (type === 5 || (type === 4 && !ephemeral)) {
    const channel = state.channels.get(interaction.channelId);
    const original: FakeMessage = {
      id: state.nextId(),
      channelId: interaction.channelId,
      ...(channel?.guildId ? { guildId: channel.guildId } : {}),
      author: state.bot,
      content: content ?? '',
      buttons: [],
      interactionId: id,
      flags: type === 5 ? 128 : 0,
    };
    state.messages.set(original.id, original);
    interaction.originalId = original.id;
    if (type === 4) state.sent.push(original);
  }
  if (!withResponse) return { status: 204 };
  return { status: 200, body: { interaction: { id, type: 2 }, resource: { type } } };
}

function editOriginal(state: RestState, app: string, token: string, body: Body, files: FakeAttachment[]): RestAnswer {
  const interaction = [...state.interactions.values()].find((i) => i.token === token);
  if (app !== state.applicationId || !interaction) return error(404, 10015, 'Unknown Webhook');
  const original = interaction.originalId ? state.messages.get(interaction.originalId) : undefined;
  if (!original) return unknownMessage();
  const parts = readContent(body);
  if ('status' in parts) return parts;
  const filling = (original.flags & 128) !== 0;
  original.content = parts.content;
  original.buttons = parts.buttons;
  if (files.length > 0) original.attachments = [...(original.attachments ?? []), ...files];
  original.flags = 0;
  if (filling) state.sent.push(original);
  else
    state.edits.push({
      channelId: original.channelId,
      messageId: original.id,
      content: original.content,
      buttons: original.buttons,
    });
  return { status: 200, body: messageObject(original, state.now()) };
}

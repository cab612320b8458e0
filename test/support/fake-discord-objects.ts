// The Discord API objects the fake serves, in their wire shape (API v10): users, channels, guilds, messages,
// interactions and message components. Snowflakes are strings, as Discord sends them.
import type { FakeAttachment } from './fake-discord-files.ts';
import { attachmentObjects } from './fake-discord-files.ts';

/** A user as Discord serializes it. */
export interface WireUser {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: null;
  bot?: boolean;
}

/** A channel the fake knows: a guild text channel, a DM, or a thread started from a message. */
export interface FakeChannel {
  id: string;
  /** 0 guild text, 1 DM, 11 public thread. */
  type: 0 | 1 | 11;
  guildId?: string;
  name?: string;
  /** For a thread: the channel it was started in. */
  parentId?: string;
  /** For a DM: the other person. */
  recipient?: WireUser;
  /** For a thread: who started it. */
  ownerId?: string;
}

/** A button of a message as the fake parsed it from its components. */
export interface FakeButton {
  label: string;
  customId: string;
  style: number;
}

/** A message the fake holds (the bot's and people's). */
export interface FakeMessage {
  id: string;
  channelId: string;
  guildId?: string;
  author: WireUser;
  content: string;
  /** Rows of buttons (empty when none). */
  buttons: FakeButton[][];
  /** The message this one replies to (message_reference). */
  replyTo?: string;
  nonce?: string;
  /** Set for the response of an interaction (a deferred reply filled by an edit of @original). */
  interactionId?: string;
  flags: number;
  editedAt?: string;
  /** Files attached to the message (a multipart send). */
  attachments?: FakeAttachment[];
}

const EPOCH = 1_420_070_400_000n;

/** A snowflake for `ms` (epoch milliseconds) and a sequence number: increasing, like Discord's. */
export function snowflake(ms: number, sequence: number): string {
  return (((BigInt(ms) - EPOCH) << 22n) | BigInt(sequence & 0xfff)).toString();
}

/** A person (or bot) as a wire user. */
export function wireUser(id: string, username: string, bot = false): WireUser {
  return {
    id,
    username,
    discriminator: '0',
    global_name: bot ? null : username,
    avatar: null,
    ...(bot ? { bot } : {}),
  };
}

/** A channel object as Discord sends it (GUILD_CREATE, THREAD_CREATE, thread creation). */
export function channelObject(channel: FakeChannel): Record<string, unknown> {
  const base: Record<string, unknown> = { id: channel.id, type: channel.type, flags: 0 };
  if (channel.type === 1)
    return { ...base, recipients: channel.recipient ? [channel.recipient] : [], last_message_id: null };
  const guild = { guild_id: channel.guildId, name: channel.name ?? channel.id };
  if (channel.type === 0)
    return { ...base, ...guild, position: 0, permission_overwrites: [], nsfw: false, topic: null };
  return {
    ...base,
    ...guild,
    parent_id: channel.parentId,
    owner_id: channel.ownerId,
    member_count: 1,
    message_count: 0,
    rate_limit_per_user: 0,
    thread_metadata: {
      archived: false,
      auto_archive_duration: 1440,
      archive_timestamp: new Date().toISOString(),
      locked: false,
    },
  };
}

/** The components of a message as Discord sends them back. */
export function componentsObject(rows: FakeButton[][]): Record<string, unknown>[] {
  return rows.map((row) => ({
    type: 1,
    components: row.map((b) => ({ type: 2, style: b.style, label: b.label, custom_id: b.customId })),
  }));
}

/** A message object as Discord sends it (REST answers, MESSAGE_CREATE, an interaction's `message`). */
export function messageObject(message: FakeMessage, timestamp: string): Record<string, unknown> {
  return {
    id: message.id,
    channel_id: message.channelId,
    ...(message.guildId ? { guild_id: message.guildId } : {}),
    author: message.author,
    content: message.content,
    timestamp,
    edited_timestamp: message.editedAt ?? null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: attachmentObjects(message.attachments),
    embeds: [],
    pinned: false,
    type: message.replyTo ? 19 : 0,
    flags: message.flags,
    components: componentsObject(message.buttons),
    ...(message.replyTo
      ? { message_reference: { message_id: message.replyTo, channel_id: message.channelId, type: 0 } }
      : {}),
    ...(message.nonce ? { nonce: message.nonce } : {}),
  };
}

/** A guild's member object for `user` (as in MESSAGE_CREATE and guild interactions). */
export function memberObject(user: WireUser | undefined, joinedAt: string): Record<string, unknown> {
  return {
    ...(user ? { user } : {}),
    roles: [],
    joined_at: joinedAt,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    permissions: '2251799813685247',
  };
}

/** A GUILD_CREATE payload: the guild, its channels and threads, its @everyone role and the bot as a member. */
export function guildObject(
  guildId: string,
  channels: FakeChannel[],
  bot: WireUser,
  joinedAt: string,
): Record<string, unknown> {
  return {
    id: guildId,
    name: `guild ${guildId}`,
    icon: null,
    owner_id: bot.id,
    unavailable: false,
    large: false,
    member_count: 2,
    joined_at: joinedAt,
    features: [],
    roles: [
      {
        id: guildId,
        name: '@everyone',
        permissions: '2251799813685247',
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    members: [memberObject(bot, joinedAt)],
    channels: channels.filter((c) => c.type === 0).map(channelObject),
    threads: channels.filter((c) => c.type === 11).map(channelObject),
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/**
 * The buttons of a create/edit body's `components`, or an error text naming what Discord would refuse: action rows
 * (type 1) of 1-5 buttons (type 2) with a label of 1-80 characters and a custom_id of 1-100, unique in the message.
 */
export function parseComponents(components: unknown): FakeButton[][] | string {
  if (components === undefined || components === null) return [];
  if (!Array.isArray(components) || components.length > 5) return 'components: at most 5 action rows';
  const seen = new Set<string>();
  const rows: FakeButton[][] = [];
  for (const row of components as { type?: unknown; components?: unknown }[]) {
    if (row.type !== 1 || !Array.isArray(row.components)) return 'components: an action row (type 1) expected';
    if (row.components.length < 1 || row.components.length > 5) return 'components: 1-5 buttons per row';
    const buttons: FakeButton[] = [];
    for (const b of row.components as { type?: unknown; label?: unknown; custom_id?: unknown; style?: unknown }[]) {
      if (b.type !== 2) return 'components: a button (type 2) expected';
      if (typeof b.label !== 'string' || b.label.length < 1 || b.label.length > 80) return 'button label: 1-80';
      if (typeof b.custom_id !== 'string' || b.custom_id.length < 1 || b.custom_id.length > 100)
        return 'button custom_id: 1-100';
      if (seen.has(b.custom_id)) return 'button custom_id: must be unique in the message';
      if (typeof b.style !== 'number' || b.style < 1 || b.style > 4) return 'button style: 1-4';
      seen.add(b.custom_id);
      buttons.push({ label: b.label, customId: b.custom_id, style: b.style });
    }
    rows.push(buttons);
  }
  return rows;
}

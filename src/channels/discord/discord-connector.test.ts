// The Discord connector (discord.js) against the fake Discord (REST and Gateway on 127.0.0.1): what reaches the
// handler (DMs, guild messages, slash commands, button presses), what is sent (components, threads, edits, the
// 2,000-character limit, the deferred response of a command), refusals, and rate limits as DeliveryErrors.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import type { FakeDiscord } from '../../../test/support/fake-discord.ts';
import { startFakeDiscord } from '../../../test/support/fake-discord.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { systemClock } from '../../core/clock.ts';
import type { DiscordChannelConfig } from '../../core/config-discord.ts';
import { discordChannelSchema } from '../../core/config-discord.ts';
import type { InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import type { DiscordConnector } from './discord-connector.ts';
import { createDiscordConnectors } from './discord-connectors.ts';

const OWNER = '400000000000000001';
const STRANGER = '400000000000000002';
const COMMANDS = [
  { name: 'claude', description: 'Launch a coding session', usage: '/claude [--name <name>] <prompt>' },
  { name: 'claude_sessions', description: 'List the coding sessions', usage: '/claude_sessions [status]' },
];

describe('Discord connector against the fake Discord', () => {
  let fake: FakeDiscord;
  let connector: DiscordConnector;
  const received: InboundMessage[] = [];
  let failNextHandoffs = 0;
  const log = captureLogger();

  before(async () => {
    fake = await startFakeDiscord();
    const section: DiscordChannelConfig = discordChannelSchema.parse({
      enabled: true,
      token: fake.token,
      applicationId: fake.applicationId,
      guildIds: [fake.guildId],
      allowedUserIds: [OWNER],
      apiUrl: fake.url,
    });
    [connector] = createDiscordConnectors(section, {
      clock: systemClock(),
      logger: log.logger,
      commands: COMMANDS,
    }) as [DiscordConnector];
    await connector.start(async (message) => {
      if (failNextHandoffs > 0) {
        failNextHandoffs -= 1;
        throw new Error('store unavailable');
      }
      received.push(message);
    });
  });

  afterEach(() => {
    received.length = 0;
  });

  after(async () => {
    await connector?.stop();
    await fake?.close();
  });

  it('connects with JSON and no compression, the four intents, and registers the slash commands', () => {
    assert.deepEqual(fake.gateway.connectQueries, ['v=10&encoding=json']);
    // Guilds (1), GuildMessages (512), DirectMessages (4096), MessageContent (32768).
    assert.equal(fake.gateway.identifies[0]?.intents, 1 | 512 | 4096 | 32768);
    assert.equal(fake.gateway.identifies[0]?.compress, false);
    const registered = fake.commands.get(fake.guildId) ?? [];
    assert.deepEqual(
      registered.map((c) => c.name),
      ['claude', 'claude_sessions'],
    );
    assert.deepEqual(registered[0]?.options, [
      { type: 3, name: 'args', description: '[--name <name>] <prompt>', required: false },
    ]);
  });

  it('a DM and a guild message that mentions the bot reach the handler; the bot’s own and unaddressed ones do not', async () => {
    const dm = fake.userMessage({ userId: OWNER, content: 'hello from a DM' });
    const aside = fake.userMessage({ userId: OWNER, channelId: fake.channelId, content: 'talking to colleagues' });
    const guild = fake.userMessage({ userId: OWNER, channelId: fake.channelId, content: 'hello guild', mention: true });
    await waitFor('both messages', () => received.length >= 2);
    assert.deepEqual(
      received.map((m) => [m.id, m.target, m.userId, m.text, m.pressed]),
      [
        [`${dm.channelId}:${dm.id}`, { channel: 'discord', chat: dm.channelId }, OWNER, 'hello from a DM', undefined],
        [
          `${guild.channelId}:${guild.id}`,
          { channel: 'discord', chat: fake.channelId },
          OWNER,
          'hello guild',
          undefined,
        ],
      ],
    );
    assert.ok(!received.some((m) => m.id.endsWith(aside.id)));
    // The bot's own message comes back over the Gateway, and is not taken as a person's.
    await connector.send({ channel: 'discord', chat: dm.channelId }, { text: 'echo?' });
    fake.userMessage({ userId: OWNER, content: 'after the echo' });
    await waitFor('the next message', () => received.some((m) => m.text === 'after the echo'));
    assert.equal(received.length, 3);
  });

  it('refuses a stranger with their id and the key, and nothing reaches the handler', async () => {
    const message = fake.userMessage({ userId: STRANGER, content: 'let me in' });
    const refusal = await waitFor('the refusal', () => fake.sent.find((m) => m.replyTo === message.id));
    assert.match(
      refusal.content,
      new RegExp(`not allowed[\\s\\S]*${STRANGER}[\\s\\S]*channels\\.discord\\.allowedUserIds`),
    );
    const command = fake.slash({ userId: STRANGER, channelId: fake.channelId, name: 'claude_sessions' });
    await waitFor('the ephemeral refusal', () => command.callbacks.length > 0);
    assert.equal(command.callbacks[0]?.type, 4);
    assert.equal(command.callbacks[0]?.ephemeral, true);
    assert.match(command.callbacks[0]?.content ?? '', new RegExp(STRANGER));
    assert.equal(received.length, 0);
  });

  it('a slash command becomes its command text, is deferred after the handler, and its reply fills the response', async () => {
    const command = fake.slash({ userId: OWNER, channelId: fake.channelId, name: 'claude', args: '--name x fix it' });
    await waitFor('the command', () => received.length > 0);
    assert.equal(received[0]?.text, '/claude --name x fix it');
    assert.equal(received[0]?.id, `${fake.channelId}:command:${command.id}`);
    await waitFor('the deferral', () => command.callbacks.length > 0);
    assert.equal(command.callbacks[0]?.type, 5);
    const sent = await connector.send(received[0]?.target, {
      text: '↩️ [x] Launched',
      replyTo: received[0]?.id,
    });
    assert.equal(sent.ref, command.originalId, 'the deferred response is the reply');
    assert.equal(fake.messages.get(sent.ref)?.content, '↩️ [x] Launched');
    // A second reply to the same command is a message of its own.
    const again = await connector.send(
      { channel: 'discord', chat: fake.channelId },
      {
        text: 'more',
        replyTo: received[0]?.id,
      },
    );
    assert.notEqual(again.ref, sent.ref);
  });

  it('renders buttons as components; a press becomes the pressed command, deferred after the handler; edit removes them', async () => {
    const target = { channel: 'discord', chat: fake.channelId };
    const buttons = [
      [
        { label: 'Allow', command: '/approve k3x9' },
        { label: 'Allow for session', command: '/approve k3x9 session' },
      ],
      [{ label: 'Deny', command: '/deny k3x9' }],
    ];
    const { ref } = await connector.send(target, { text: '🔐 wants to run Bash', buttons });
    const message = fake.messages.get(ref);
    assert.deepEqual(
      message?.buttons.map((row) => row.map((b) => [b.label, b.customId])),
      [
        [
          ['Allow', '/approve k3x9'],
          ['Allow for session', '/approve k3x9 session'],
        ],
        [['Deny', '/deny k3x9']],
      ],
    );
    const press = fake.press({ userId: OWNER }, ref, '/approve k3x9 session');
    await waitFor('the press', () => received.length > 0);
    assert.deepEqual(
      [received[0]?.text, received[0]?.pressed, received[0]?.id],
      ['/approve k3x9 session', true, `${fake.channelId}:${ref}:press:${press.id}`],
    );
    await waitFor('the deferred update', () => press.callbacks.length > 0);
    assert.equal(press.callbacks[0]?.type, 6);
    const stranger = fake.press({ userId: STRANGER }, ref, '/deny k3x9');
    await waitFor('the stranger answered', () => stranger.callbacks.length > 0);
    assert.equal(stranger.callbacks[0]?.ephemeral, true);
    assert.equal(received.length, 1, 'the stranger’s press did not reach the handler');

    await connector.edit(target, ref, { text: '✅ allowed for this session' });
    assert.deepEqual(fake.edits.at(-1), {
      channelId: fake.channelId,
      messageId: ref,
      content: '✅ allowed for this session',
      buttons: [],
    });
  });

  it('starts a thread from the message a target names, on first use, and sends into it', async () => {
    const target = { channel: 'discord', chat: fake.channelId };
    const launch = await connector.send(target, { text: '↩️ [flaky-fix] Launched:\nfix the test' });
    const threaded = { ...target, thread: launch.ref };
    const first = await connector.send(threaded, { text: '🔔 [flaky-fix] asks:\nWhich file?' });
    const second = await connector.send(threaded, {
      text: '✅ [flaky-fix] Completed',
      buttons: [[{ label: 'Ok', command: '/ok' }]],
    });
    assert.equal(fake.threads.length, 1);
    assert.deepEqual(
      [fake.threads[0]?.id, fake.threads[0]?.parentId, fake.threads[0]?.name],
      [launch.ref, fake.channelId, '↩️ [flaky-fix] Launched:'],
    );
    assert.deepEqual(fake.textsIn(launch.ref), ['🔔 [flaky-fix] asks:\nWhich file?', '✅ [flaky-fix] Completed']);
    assert.equal(first.ref, `${launch.ref}:${fake.sent.at(-2)?.id}`, 'a ref in a thread names the thread');
    await connector.edit(target, second.ref, { text: '✅ done' });
    assert.equal(fake.edits.at(-1)?.channelId, launch.ref);
    // A person answering in the thread: the target names the thread.
    fake.userMessage({ userId: OWNER, channelId: launch.ref, content: 'looks good' });
    await waitFor('the thread message', () => received.length > 0);
    assert.deepEqual(received[0]?.target, { channel: 'discord', chat: fake.channelId, thread: launch.ref });
    // In a DM there are no threads: the message goes to the DM itself.
    const dm = fake.dmChannel(OWNER);
    const opener = await connector.send({ channel: 'discord', chat: dm }, { text: 'launched' });
    await connector.send({ channel: 'discord', chat: dm, thread: opener.ref }, { text: 'in the DM' });
    assert.equal(fake.textsIn(dm).at(-1), 'in the DM');
    const tries = fake.requests.filter((r) => r.path.endsWith('/threads')).length;
    await connector.send({ channel: 'discord', chat: dm, thread: opener.ref }, { text: 'again' });
    assert.equal(fake.requests.filter((r) => r.path.endsWith('/threads')).length, tries, 'no second try in a DM');
  });

  it('keeps the 2,000-character limit, resends once per delivery key, and reports a 429 with its retry-after', async () => {
    assert.equal(connector.maxMessageLength, 2000);
    const target = { channel: 'discord', chat: fake.channelId };
    await connector.send(target, { text: 'x'.repeat(2000) });
    await assert.rejects(connector.send(target, { text: 'x'.repeat(2001) }), (e: unknown) => {
      return e instanceof DeliveryError && e.kind === 'permanent';
    });
    const once = await connector.send(target, { text: 'once' }, { key: 'outbox-7-0' });
    const twice = await connector.send(target, { text: 'once' }, { key: 'outbox-7-0' });
    assert.equal(twice.ref, once.ref, 'the nonce made the resend return the first message');

    fake.failNext({ method: 'POST', path: /^\/channels\/\d+\/messages$/, status: 429, retryAfter: 2.5 });
    const limited = await connector.send(target, { text: 'too fast' }).then(
      () => assert.fail('sent'),
      (e: unknown) => e,
    );
    assert.ok(limited instanceof DeliveryError);
    assert.equal(limited.kind, 'rate_limited');
    assert.ok((limited.retryAfterMs ?? 0) >= 2500, `retryAfterMs ${limited.retryAfterMs}`);

    fake.failNext({
      method: 'POST',
      path: /^\/channels\/\d+\/messages$/,
      status: 403,
      code: 50013,
      message: 'Missing Permissions',
    });
    await assert.rejects(connector.send(target, { text: 'no access' }), (e: unknown) => {
      return e instanceof DeliveryError && e.kind === 'permanent' && /50013/.test(e.message);
    });
  });

  it('a message whose hand-off keeps failing gets a notice; one that fails once is retried', async () => {
    failNextHandoffs = 1;
    fake.userMessage({ userId: OWNER, content: 'retried' });
    await waitFor('the retried message', () => received.some((m) => m.text === 'retried'));
    failNextHandoffs = 3;
    const lost = fake.userMessage({ userId: OWNER, content: 'lost' });
    await waitFor('the notice', () =>
      fake.sent.find((m) => m.replyTo === lost.id && /could not be accepted/.test(m.content)),
    );
    failNextHandoffs = 0;
  });
});

// Several Discord bots (channels.discord.accounts), the `gatewayUrl` override, and the connector's pure parts: reply
// refs, action rows, markdown and slash command bodies.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FakeDiscord } from '../../../test/support/fake-discord.ts';
import { FAKE_DISCORD_TOKEN, startFakeDiscord } from '../../../test/support/fake-discord.ts';
import { freePort } from '../../../test/support/ports.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { systemClock } from '../../core/clock.ts';
import { discordChannelSchema } from '../../core/config-discord.ts';
import { silentLogger } from '../../core/logger.ts';
import type { InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { applicationCommands } from './discord-commands.ts';
import type { DiscordConnector } from './discord-connector.ts';
import { createDiscordConnectors } from './discord-connectors.ts';
import { parseReplyTo } from './discord-inbound.ts';
import { toDiscordMarkdown } from './discord-markdown.ts';
import { actionRows, nonceOf } from './discord-outbound.ts';

const OWNER = '400000000000000001';

describe('Discord accounts and gatewayUrl', () => {
  let work: FakeDiscord;
  let home: FakeDiscord;
  let connectors: DiscordConnector[] = [];
  const received: InboundMessage[] = [];

  before(async () => {
    work = await startFakeDiscord();
    // This one's GET /gateway/bot names a port nothing listens on: only `gatewayUrl` leads to its Gateway.
    home = await startFakeDiscord({ gatewayBotUrl: 'ws://127.0.0.1:9/gateway' });
    const section = discordChannelSchema.parse({
      enabled: true,
      allowedUserIds: [OWNER],
      accounts: {
        work: { token: work.token, apiUrl: work.url },
        home: { token: home.token, apiUrl: home.url, gatewayUrl: home.ownGatewayUrl(), allowedUserIds: ['1'] },
      },
    });
    connectors = createDiscordConnectors(section, { clock: systemClock(), logger: silentLogger() });
    for (const c of connectors) await c.start(async (m) => void received.push(m));
  });

  after(async () => {
    for (const c of connectors) await c.stop();
    await work?.close();
    await home?.close();
  });

  it('builds one connector per account, each naming its account in targets and refusals', async () => {
    assert.deepEqual(
      connectors.map((c) => [c.channel, c.account, c.threads, c.maxMessageLength]),
      [
        ['discord', 'work', true, 2000],
        ['discord', 'home', true, 2000],
      ],
    );
    const message = work.userMessage({ userId: OWNER, content: 'hi work' });
    await waitFor('the work message', () => received.length > 0);
    assert.deepEqual(received[0]?.target, { channel: 'discord', account: 'work', chat: message.channelId });
    // The home bot has its own allow-list, where OWNER is a stranger.
    const refused = home.userMessage({ userId: OWNER, content: 'hi home' });
    const refusal = await waitFor('the refusal', () => home.sent.find((m) => m.replyTo === refused.id));
    assert.match(refusal.content, /channels\.discord\.accounts\.home\.allowedUserIds/);
    assert.equal(received.length, 1);
    assert.equal(home.gateway.identifies.length, 1, 'the home bot reached its Gateway through gatewayUrl');
  });

  it('throws a token error naming the account’s key', () => {
    const section = discordChannelSchema.parse({ enabled: true, tokenEnv: 'NOPE', accounts: { ops: {} } });
    assert.throws(
      () => createDiscordConnectors(section, { clock: systemClock(), logger: silentLogger(), env: {} }),
      /channels\.discord\.accounts\.ops\.token/,
    );
  });
});

describe('Discord connector parts', () => {
  it('parses the reply refs its inbound ids make', () => {
    assert.deepEqual(parseReplyTo('12:34'), { kind: 'message', channelId: '12', messageId: '34' });
    assert.deepEqual(parseReplyTo('12:34:press:56'), { kind: 'message', channelId: '12', messageId: '34' });
    assert.deepEqual(parseReplyTo('12:command:56'), { kind: 'command', channelId: '12', interactionId: '56' });
    assert.equal(parseReplyTo('telegram:1'), undefined);
    assert.equal(parseReplyTo(undefined), undefined);
  });

  it('wraps rows of more than five buttons and refuses what Discord would', () => {
    const six = Array.from({ length: 6 }, (_, i) => ({ label: `${i + 1}`, command: `/approve x ${i + 1}` }));
    assert.deepEqual(
      actionRows([six]).map((r) => r.components.length),
      [5, 1],
    );
    assert.deepEqual(actionRows(undefined), []);
    const refused = (buttons: { label: string; command: string }[][]): boolean => {
      try {
        actionRows(buttons);
        return false;
      } catch (error) {
        return error instanceof DeliveryError && error.kind === 'permanent';
      }
    };
    assert.ok(refused([[{ label: 'a', command: 'x'.repeat(101) }]]));
    assert.ok(
      refused([
        [
          { label: 'a', command: '/same' },
          { label: 'b', command: '/same' },
        ],
      ]),
    );
    assert.ok(refused(Array.from({ length: 6 }, (_, i) => [{ label: 'a', command: `/c${i}` }])));
    assert.equal(nonceOf('outbox-1-0').length, 25);
    assert.notEqual(nonceOf('outbox-1-0'), nonceOf('outbox-1-1'));
  });

  it('keeps Discord markdown, turning only deeper headings bold (outside code)', () => {
    assert.equal(toDiscordMarkdown('# Title\n**bold** `code`'), '# Title\n**bold** `code`');
    assert.equal(toDiscordMarkdown('#### Deep ####\ntext'), '**Deep**\ntext');
    assert.equal(toDiscordMarkdown('```\n#### kept\n```'), '```\n#### kept\n```');
  });

  it('makes slash command bodies Discord accepts', () => {
    const commands = applicationCommands(
      [
        { name: '/claude', description: 'Launch', usage: '/claude [--name <name>] <prompt>' },
        { name: 'Bad Name', description: 'x' },
        { name: 'claude', description: 'dup' },
        { name: 'claude_stats', description: '' },
      ],
      silentLogger(),
    );
    assert.deepEqual(
      commands.map((c) => [c.name, c.description, c.options[0]?.description]),
      [
        ['claude', 'Launch', '[--name <name>] <prompt>'],
        ['claude_stats', 'claude_stats', 'arguments, as after the command'],
      ],
    );
  });
});

describe('Discord connector start', () => {
  it('throws when Discord refuses the token, naming the key', async () => {
    const fake = await startFakeDiscord();
    const section = discordChannelSchema.parse({
      enabled: true,
      token: 'wrong',
      apiUrl: fake.url,
      allowedUserIds: ['1'],
    });
    const [connector] = createDiscordConnectors(section, { clock: systemClock(), logger: silentLogger() });
    try {
      await assert.rejects(connector?.start(async () => {}) ?? Promise.resolve(), /channels\.discord\.token/);
    } finally {
      await connector?.stop();
      await fake.close();
    }
  });

  it('starts while Discord is unreachable and connects once it is there', async () => {
    const port = await freePort();
    const section = discordChannelSchema.parse({
      enabled: true,
      token: FAKE_DISCORD_TOKEN,
      apiUrl: `http://127.0.0.1:${port}/api`,
      allowedUserIds: [OWNER],
    });
    const [connector] = createDiscordConnectors(section, { clock: systemClock(), logger: silentLogger() });
    const received: InboundMessage[] = [];
    await connector?.start(async (m) => void received.push(m));
    const fake = await startFakeDiscord({ port });
    try {
      await waitFor('the bot to connect', () => fake.gateway.ready > 0);
      fake.userMessage({ userId: OWNER, content: 'late hello' });
      await waitFor('the message', () => received.some((m) => m.text === 'late hello'));
    } finally {
      await connector?.stop();
      await fake.close();
    }
  });
});

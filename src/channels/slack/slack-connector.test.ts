// The Slack connector over Socket Mode against the fake Slack (Web API + Socket Mode WebSocket on 127.0.0.1), with
// @slack/bolt pointed at it: DMs and mentions reach the handler before their envelope is acknowledged, the slash
// command and button presses become commands, buttons are Block Kit, edits are chat.update, threads are honoured,
// strangers are refused, and a 429 becomes a rate_limited DeliveryError with Slack's Retry-After.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import type { FakeSlack } from '../../../test/support/fake-slack.ts';
import { startFakeSlack } from '../../../test/support/fake-slack.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { ManualClock, systemClock } from '../../core/clock.ts';
import type { SlackChannelConfig } from '../../core/config-slack.ts';
import { slackChannelSchema } from '../../core/config-slack.ts';
import type { InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { EditRefusedError } from '../outbox-edit.ts';
import type { SlackConnector } from './slack-connectors.ts';
import { createSlackConnectors } from './slack-connectors.ts';

const OWNER = 'UOWNER';
const STRANGER = 'USTRANGER';

describe('Slack connector (Socket Mode) against the fake Slack', () => {
  let fake: FakeSlack;
  let connectors: SlackConnector[];

  function section(overrides: Record<string, unknown> = {}): SlackChannelConfig {
    return slackChannelSchema.parse({
      enabled: true,
      botToken: fake.botToken,
      appToken: fake.appToken,
      apiUrl: fake.apiUrl,
      allowedUserIds: [OWNER],
      ...overrides,
    });
  }

  /** Starts the connector(s) of `config` with `handler`, and waits for the Socket Mode connection. */
  async function started(handler: (m: InboundMessage) => Promise<void>, config = section()): Promise<SlackConnector> {
    const built = createSlackConnectors(config, {
      clock: systemClock(),
      logger: captureLogger().logger,
      env: {},
      commands: [{ command: 'claude', description: 'Launch a coding session' }],
    });
    connectors.push(...built);
    const before = fake.socket.opened;
    for (const c of built) await c.start(handler);
    await waitFor('the Socket Mode connection', () => fake.socket.opened >= before + built.length);
    const [first] = built;
    assert.ok(first);
    return first;
  }

  beforeEach(async () => {
    fake = await startFakeSlack();
    connectors = [];
  });

  afterEach(async () => {
    for (const c of connectors) await c.stop();
    await fake.close();
  });

  it('a DM reaches the handler, and its envelope is acknowledged only after the handler resolved', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const got: InboundMessage[] = [];
    await started(async (m) => {
      got.push(m);
      await gate;
    });
    const pushed = fake.pushMessage({ user: OWNER, text: '/claude fix &lt;it&gt;' });
    await waitFor('the handler', () => got.length === 1);
    assert.equal(fake.socket.ackOf(pushed.envelopeId), undefined, 'not acknowledged while the handler runs');
    release();
    await waitFor('the ack', () => fake.socket.ackOf(pushed.envelopeId));
    const [message] = got;
    assert.equal(message?.id, `${pushed.channel}:${pushed.ts}`);
    assert.deepEqual(message?.target, { channel: 'slack', chat: `D${OWNER}` });
    assert.equal(message?.userId, OWNER);
    assert.equal(message?.text, '/claude fix <it>');
    assert.equal(message?.pressed, undefined);
  });

  it('a mention in a channel (in a thread) reaches the handler without the mention; a failed handler leaves it unacknowledged', async () => {
    let fail = true;
    const got: InboundMessage[] = [];
    await started(async (m) => {
      got.push(m);
      if (fail) throw new Error('store down');
    });
    const parent = fake.nextTs();
    const pushed = fake.pushMention({ user: OWNER, text: 'what runs?', channel: 'CTEAM', threadTs: parent });
    await waitFor('the handler', () => got.length === 1);
    assert.deepEqual(got[0]?.target, { channel: 'slack', chat: 'CTEAM', thread: parent });
    assert.equal(got[0]?.text, 'what runs?');
    assert.equal(fake.socket.ackOf(pushed.envelopeId), undefined, 'a failed hand-off is not acknowledged');
    // Slack delivers it again on the next connection; this time it is accepted, under the same id.
    fail = false;
    fake.socket.refresh();
    await waitFor('the redelivery to be acknowledged', () => fake.socket.ackOf(pushed.envelopeId), 20_000);
    assert.equal(got.length, 2);
    assert.equal(got[1]?.id, got[0]?.id, 'the same id: the engine deduplicates');
  });

  it('/switchboard <command> becomes /<command>; the bare command lists the commands', async () => {
    const got: InboundMessage[] = [];
    await started(async (m) => void got.push(m));
    const envelope = fake.pushCommand(OWNER, 'claude_sessions');
    await waitFor('the ack', () => fake.socket.ackOf(envelope));
    assert.equal(got[0]?.text, '/claude_sessions');
    assert.deepEqual(got[0]?.target, { channel: 'slack', chat: `D${OWNER}` });
    const bare = fake.pushCommand(OWNER, '');
    const ack = await waitFor('the ack', () => fake.socket.ackOf(bare));
    assert.match(JSON.stringify(ack.payload), /\/switchboard claude/);
    assert.equal(got.length, 1, 'the bare command is answered, not handed over');
  });

  it('buttons are Block Kit; a press becomes a pressed command in the message thread; edits are chat.update', async () => {
    const got: InboundMessage[] = [];
    const slack = await started(async (m) => void got.push(m));
    const parent = fake.nextTs();
    const sent = await slack.send(
      { channel: 'slack', chat: 'CTEAM', thread: parent },
      {
        text: '🔐 wants to run Bash: echo <hi> & bye',
        buttons: [
          [
            { label: 'Allow', command: '/approve k3x9' },
            { label: 'Deny', command: '/deny k3x9' },
          ],
        ],
      },
    );
    const post = fake.posts.at(-1);
    assert.ok(post);
    assert.ok(sent, 'a ref');
    assert.equal(sent.ref, post.ts);
    assert.equal(post.threadTs, parent, 'thread_ts honoured');
    assert.equal(post.raw, '🔐 wants to run Bash: echo &lt;hi&gt; &amp; bye');
    assert.deepEqual(
      post.buttons.map((row) => row.map((b) => [b.label, b.value])),
      [
        [
          ['Allow', '/approve k3x9'],
          ['Deny', '/deny k3x9'],
        ],
      ],
    );
    assert.equal((post.blocks?.[0] as { type: string }).type, 'section');

    const envelope = fake.press(OWNER, post, 'Allow');
    await waitFor('the press ack', () => fake.socket.ackOf(envelope));
    assert.equal(got[0]?.text, '/approve k3x9');
    assert.equal(got[0]?.pressed, true);
    assert.deepEqual(got[0]?.target, { channel: 'slack', chat: 'CTEAM', thread: parent });

    await slack.edit({ channel: 'slack', chat: 'CTEAM' }, sent.ref, { text: '✅ allowed' });
    assert.deepEqual(fake.updates.at(-1), { channel: 'CTEAM', ts: post.ts, text: '✅ allowed', buttons: [] });
    await assert.rejects(
      slack.edit({ channel: 'slack', chat: 'CTEAM' }, '1.2', { text: 'x' }),
      (e) => e instanceof EditRefusedError,
    );
    // A reply sent to a thread reply goes in the parent's thread.
    await slack.send({ channel: 'slack', chat: 'CTEAM', thread: sent.ref }, { text: 'next' });
    assert.equal(fake.posts.at(-1)?.threadTs, parent);
  });

  it('refuses strangers (message, command, press) with their id and the key; nothing reaches the handler', async () => {
    const got: InboundMessage[] = [];
    const slack = await started(async (m) => void got.push(m));
    const dm = fake.pushMessage({ user: STRANGER, text: 'hello' });
    await waitFor('the ack', () => fake.socket.ackOf(dm.envelopeId));
    assert.match(
      fake.textsIn(`D${STRANGER}`)[0] ?? '',
      /not allowed[\s\S]*USTRANGER[\s\S]*channels\.slack\.allowedUserIds/,
    );
    const command = fake.pushCommand(STRANGER, 'claude_sessions', 'CTEAM');
    const ack = await waitFor('the ack', () => fake.socket.ackOf(command));
    assert.match(JSON.stringify(ack.payload), /USTRANGER/);
    await slack.send(
      { channel: 'slack', chat: 'CTEAM' },
      { text: 'q', buttons: [[{ label: 'Allow', command: '/approve a' }]] },
    );
    const post = fake.posts.at(-1);
    assert.ok(post);
    const press = fake.press(STRANGER, post, 'Allow');
    await waitFor('the ack', () => fake.socket.ackOf(press));
    const ephemeral = fake.posts.at(-1);
    assert.equal(ephemeral?.ephemeralTo, STRANGER);
    assert.match(ephemeral?.text ?? '', /not allowed/);
    assert.equal(got.length, 0);
  });

  it('listens only in allowedChannels (DMs always), naming the key', async () => {
    const got: InboundMessage[] = [];
    await started(async (m) => void got.push(m), section({ allowedChannels: ['CTEAM'] }));
    const other = fake.pushMention({ user: OWNER, text: 'hi', channel: 'COTHER' });
    await waitFor('the ack', () => fake.socket.ackOf(other.envelopeId));
    assert.match(fake.posts.at(-1)?.text ?? '', /COTHER[\s\S]*channels\.slack\.allowedChannels/);
    const ok = fake.pushMention({ user: OWNER, text: 'hi', channel: 'CTEAM' });
    const dm = fake.pushMessage({ user: OWNER, text: 'hi' });
    await waitFor('both acks', () => fake.socket.ackOf(ok.envelopeId) && fake.socket.ackOf(dm.envelopeId));
    assert.deepEqual(
      got.map((m) => m.target.chat),
      ['CTEAM', `D${OWNER}`],
    );
  });

  it('a 429 is a rate_limited DeliveryError carrying Retry-After; a missing channel is permanent', async () => {
    const slack = await started(async () => {});
    fake.rateLimit('chat.postMessage', 7);
    await assert.rejects(
      slack.send({ channel: 'slack', chat: 'CTEAM' }, { text: 'hi' }),
      (e) => e instanceof DeliveryError && e.kind === 'rate_limited' && e.retryAfterMs === 7000,
    );
    await assert.rejects(
      slack.send({ channel: 'slack', chat: '' }, { text: 'hi' }),
      (e) => e instanceof DeliveryError && e.kind === 'permanent',
    );
    assert.ok(await slack.send({ channel: 'slack', chat: 'CTEAM' }, { text: 'hi' }));
  });

  it('several accounts: one connector per workspace, each named', async () => {
    const config = section({ accounts: { work: {}, home: { allowedUserIds: ['UHOME'] } } });
    const got: InboundMessage[] = [];
    await started(async (m) => void got.push(m), config);
    assert.deepEqual(
      connectors.map((c) => c.account),
      ['work', 'home'],
    );
    const pushed = fake.pushMessage({ user: 'UHOME', text: 'hi' });
    await waitFor(
      'two acks (both connections got it)',
      () => fake.socket.acks.filter((a) => a.envelopeId === pushed.envelopeId).length >= 1,
    );
    await waitFor('the home account to take it', () => got.find((m) => m.target.account === 'home'));
    assert.match(fake.textsIn('DUHOME').join('\n'), /channels\.slack\.accounts\.work\.allowedUserIds/);
  });

  it('starts while Slack cannot be reached, and connects on a later try', async () => {
    const clock = new ManualClock(0);
    fake.rateLimit('auth.test', 5);
    const [slack] = createSlackConnectors(section(), { clock, logger: captureLogger().logger, env: {} });
    assert.ok(slack);
    connectors.push(slack);
    await slack.start(async () => {});
    assert.equal(fake.socket.opened, 0, 'not connected yet');
    clock.advance(60_000);
    await waitFor('the Socket Mode connection', () => fake.socket.opened > 0);
    assert.equal(slack.botUserId, fake.botUserId);
  });

  it('logs an error naming the key when Slack refuses the app-level token', async () => {
    const captured = captureLogger();
    const [slack] = createSlackConnectors(section({ appToken: 'xapp-wrong' }), {
      clock: systemClock(),
      logger: captured.logger,
      env: {},
    });
    assert.ok(slack);
    connectors.push(slack);
    await slack.start(async () => {});
    const line = await waitFor('the error', () => captured.find('error', /Socket Mode did not start/)[0]);
    assert.match(line.msg, /channels\.slack\.appToken/);
    assert.equal(fake.socket.opened, 0);
    assert.ok(!JSON.stringify(captured.lines).includes('xapp-wrong'), 'the token is never logged');
  });

  it('refuses to start with a token Slack rejects, naming the key', async () => {
    const [bad] = createSlackConnectors(section({ botToken: 'xoxb-wrong' }), {
      clock: systemClock(),
      logger: captureLogger().logger,
      env: {},
    });
    assert.ok(bad);
    await assert.rejects(
      bad.start(async () => {}),
      /Slack refused the bot token \(invalid_auth\): check channels\.slack\.botToken/,
    );
  });
});

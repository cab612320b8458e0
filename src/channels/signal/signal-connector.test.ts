// The Signal connector against the fake signal-cli daemon (real HTTP on 127.0.0.1): intake of DMs and group messages
// (once, though the stream replays), sends to numbers and groups, buttons as a numbered list and a number as the
// pressed command, strangers refused, reconnects with Last-Event-ID after the stream dropped, several accounts.
import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import type { FakeSignalCli } from '../../../test/support/fake-signal-cli.ts';
import { startFakeSignalCli } from '../../../test/support/fake-signal-cli.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { systemClock } from '../../core/clock.ts';
import type { SignalChannelConfig } from '../../core/config-signal.ts';
import { signalChannelSchema } from '../../core/config-signal.ts';
import { silentLogger } from '../../core/logger.ts';
import type { InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import type { SignalConnector } from './signal-connector.ts';
import { createSignalConnectors } from './signal-connectors.ts';

const BOT = '+15550000001';
const OWNER = '+15551110000';
const STRANGER = '+15559990000';
const GROUP = 'Pmpi+EfPWmsxiomLe9Nx2XF9HOE/83p6iKiFj65iMwI=';

describe('Signal connector against the fake signal-cli daemon', () => {
  let fake: FakeSignalCli;
  let running: SignalConnector[];
  const dir = tempDir('sb-signal-');
  let messages: InboundMessage[];
  const handler = async (m: InboundMessage): Promise<void> => {
    messages.push(m);
  };

  function section(overrides: Record<string, unknown> = {}): SignalChannelConfig {
    return signalChannelSchema.parse({
      enabled: true,
      url: fake.url,
      allowedNumbers: [OWNER],
      retryBaseDelayMs: 10,
      retryMaxDelayMs: 50,
      ...overrides,
    });
  }

  async function start(overrides: Record<string, unknown> = {}, home?: string): Promise<SignalConnector[]> {
    const connectors = createSignalConnectors(section(overrides), {
      clock: systemClock(),
      logger: silentLogger(),
      ...(home ? { home } : {}),
    });
    for (const c of connectors) {
      running.push(c);
      await c.start(handler);
    }
    await waitFor('the streams to open', () => connectors.every((c) => c.connected));
    return connectors;
  }

  beforeEach(async () => {
    fake = await startFakeSignalCli({ accounts: [BOT, '+15550000002'] });
    running = [];
    messages = [];
  });

  afterEach(async () => {
    for (const c of running) await c.stop();
    await fake.close();
  });

  after(() => dir.remove());

  it('passes a DM and a group message to the handler once, though the stream replays them', async () => {
    await start();
    const dm = fake.push({ from: OWNER, text: 'hello bot', name: 'Owner' });
    const group = fake.push({ from: OWNER, text: '/claude_sessions', groupId: GROUP });
    await waitFor('both messages', () => messages.length === 2);
    fake.replay(dm.eventId);
    fake.replay(group.eventId);
    const marker = fake.push({ from: OWNER, text: 'after the replay' });
    await waitFor('the marker', () => messages.length === 3);
    assert.deepEqual(
      messages.map((m) => [m.id, m.target, m.userId, m.text]),
      [
        [`${OWNER}:${dm.timestamp}`, { channel: 'signal', chat: OWNER }, OWNER, 'hello bot'],
        [`${OWNER}:${group.timestamp}`, { channel: 'signal', chat: `group.${GROUP}` }, OWNER, '/claude_sessions'],
        [`${OWNER}:${marker.timestamp}`, { channel: 'signal', chat: OWNER }, OWNER, 'after the replay'],
      ],
    );
    assert.equal(messages[0]?.userName, 'Owner');
    assert.equal(messages[0]?.pressed, undefined);
  });

  it('ignores receipts and tells an allowed sender that attachments alone are not read', async () => {
    await start();
    fake.pushReceipt(OWNER);
    fake.push({ from: OWNER, text: '', attachmentOnly: true });
    await waitFor('the notice', () => fake.textsTo(OWNER).length === 1);
    assert.match(fake.textsTo(OWNER)[0] ?? '', /Only text messages/);
    assert.equal(messages.length, 0);
  });

  it('sends to a number (quoting the message it answers) and to a group; classifies failures', async () => {
    const [connector] = await start();
    assert.ok(connector);
    fake.register(OWNER);
    const sent = await connector.send(
      { channel: 'signal', chat: OWNER },
      { text: 'hi there', replyTo: `${OWNER}:1700000001000` },
    );
    assert.equal(sent.ref, String(fake.sent[0]?.timestamp));
    assert.deepEqual(fake.sent[0], {
      account: BOT,
      recipient: OWNER,
      message: 'hi there',
      quoteTimestamp: 1700000001000,
      quoteAuthor: OWNER,
      timestamp: Number(sent.ref),
    });
    fake.push({ from: OWNER, text: 'makes the group known', groupId: GROUP });
    await waitFor('the group message', () => messages.length === 1);
    const toGroup = await connector.send({ channel: 'signal', chat: `group.${GROUP}` }, { text: 'to the team' });
    assert.deepEqual(fake.textsTo(`group.${GROUP}`), ['to the team']);
    assert.notEqual(toGroup.ref, sent.ref);
    await connector.typing({ channel: 'signal', chat: `group.${GROUP}` });
    assert.deepEqual(fake.typing, [`group.${GROUP}`]);

    const classified = async (): Promise<[string, number | undefined]> => {
      const error = await connector.send({ channel: 'signal', chat: OWNER }, { text: 'x' }).then(
        () => assert.fail('the send should fail'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof DeliveryError);
      return [error.kind, error.retryAfterMs];
    };
    fake.failNextSend({ type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: 7 });
    assert.deepEqual(await classified(), ['rate_limited', 7000]);
    fake.failNextSend({ type: 'NETWORK_FAILURE' });
    assert.deepEqual(await classified(), ['transient', undefined]);
    fake.failNextSend({ code: -5, message: 'Rate limit exceeded' });
    assert.equal((await classified())[0], 'rate_limited');
    fake.failNextSend({ type: 'UNREGISTERED_FAILURE' });
    assert.deepEqual(await classified(), ['permanent', undefined]);

    for (const chat of [STRANGER, 'group.bm9wZQ==']) {
      await assert.rejects(
        connector.send({ channel: 'signal', chat }, { text: 'x' }),
        (error: unknown) => error instanceof DeliveryError && error.kind === 'permanent',
      );
    }
  });

  it('shows buttons as a numbered list; a reply of a number is passed on as that command, pressed', async () => {
    const home = dir.path;
    const [connector] = await start({}, home);
    assert.ok(connector);
    fake.register(OWNER);
    const buttons = [
      [
        { label: 'Allow', command: '/approve k3x9' },
        { label: 'Allow for session', command: '/approve k3x9 session' },
      ],
      [
        { label: 'Always', command: '/approve k3x9 always' },
        { label: 'Deny', command: '/deny k3x9' },
      ],
    ];
    await connector.send({ channel: 'signal', chat: OWNER }, { text: '🔐 wants to run Bash', buttons });
    assert.equal(fake.textsTo(OWNER)[0], '🔐 wants to run Bash\n\n1 Allow · 2 Allow for session\n3 Always · 4 Deny');
    // A message without buttons in between does not forget the list.
    await connector.send({ channel: 'signal', chat: OWNER }, { text: 'streamed output' });
    fake.push({ from: OWNER, text: ' 2 ' });
    fake.push({ from: OWNER, text: '7' });
    await waitFor('both replies', () => messages.length === 2);
    assert.equal(messages[0]?.text, '/approve k3x9 session');
    assert.equal(messages[0]?.pressed, true);
    assert.equal(messages[1]?.text, '7', 'a number outside the list is plain text');
    assert.equal(messages[1]?.pressed, undefined);

    // The list survives a restart (kept in the state directory).
    await connector.stop();
    const [again] = await start({}, home);
    assert.ok(again);
    fake.push({ from: OWNER, text: '4' });
    await waitFor('the reply after the restart', () => messages.length === 3);
    assert.equal(messages[2]?.text, '/deny k3x9');
    assert.equal(messages[2]?.pressed, true);
  });

  it('refuses a stranger with their number and the key; in a group only what is addressed to the bot', async () => {
    await start();
    fake.push({ from: STRANGER, text: 'let me in' });
    await waitFor('the refusal', () => fake.textsTo(STRANGER).length === 1);
    assert.match(
      fake.textsTo(STRANGER)[0] ?? '',
      /not allowed[\s\S]*\+15559990000[\s\S]*channels\.signal\.allowedNumbers/,
    );
    fake.push({ from: STRANGER, text: 'just chatting', groupId: GROUP });
    fake.push({ from: STRANGER, text: '/claude do it', groupId: GROUP });
    await waitFor('the group refusal', () => fake.textsTo(`group.${GROUP}`).length === 1);
    fake.push({ from: OWNER, text: 'marker' });
    await waitFor('the marker', () => messages.length === 1);
    assert.deepEqual(
      messages.map((m) => m.text),
      ['marker'],
      'nothing of the stranger reached the handler',
    );
    assert.equal(fake.textsTo(`group.${GROUP}`).length, 1, 'group chatter is not answered');
  });

  it('reconnects after the stream drops, naming the last handled event, and misses nothing', async () => {
    await start();
    const first = fake.push({ from: OWNER, text: 'one' });
    await waitFor('the first message', () => messages.length === 1);
    fake.dropStreams();
    // Pushed while no stream is open: kept by the daemon, replayed after the reconnect's Last-Event-ID.
    fake.push({ from: OWNER, text: 'two' });
    await waitFor('the reconnect', () => fake.openStreams === 1 && fake.streamRequests.length === 2);
    await waitFor('the second message', () => messages.length === 2);
    assert.equal(fake.streamRequests[1]?.lastEventId, first.eventId);
    assert.deepEqual(
      messages.map((m) => m.text),
      ['one', 'two'],
    );
  });

  it('drops a silent stream (no keep-alive) after streamIdleTimeoutMs and opens it again', async () => {
    await start({ streamIdleTimeoutMs: 100 });
    // A first message gives the connector an event id to resume from, so nothing pushed during a reconnect is missed.
    fake.push({ from: OWNER, text: 'hello' });
    await waitFor('the first message', () => messages.length === 1);
    const opened = fake.streamRequests.length;
    await waitFor('a reconnect after the silence', () => fake.streamRequests.length > opened);
    fake.push({ from: OWNER, text: 'still there?' });
    await waitFor('the second message', () => messages.length === 2);
    assert.equal(messages[1]?.text, 'still there?');
    assert.ok(fake.streamRequests.slice(opened).every((r) => r.lastEventId !== undefined));
  });

  it('serves several numbers, one connector each, with targets naming the account', async () => {
    const connectors = await start({
      accounts: { work: { account: BOT }, home: { account: '+15550000002', allowedNumbers: [STRANGER] } },
    });
    assert.deepEqual(
      connectors.map((c) => c.account),
      ['work', 'home'],
    );
    assert.deepEqual(
      fake.streamRequests.map((r) => r.account),
      [BOT, '+15550000002'],
    );
    const work = fake.push({ from: OWNER, text: 'to work' });
    fake.push({ from: STRANGER, text: 'to home', account: '+15550000002' });
    await waitFor('both', () => messages.length === 2);
    const byText = Object.fromEntries(messages.map((m) => [m.text, m]));
    assert.deepEqual(byText['to work']?.target, { channel: 'signal', account: 'work', chat: OWNER });
    assert.equal(byText['to work']?.id, `work:${OWNER}:${work.timestamp}`, 'the id names the account');
    assert.deepEqual(byText['to home']?.target, { channel: 'signal', account: 'home', chat: STRANGER });
    fake.register(OWNER);
    await connectors[0]?.send(
      { channel: 'signal', account: 'work', chat: OWNER },
      { text: 'from work', replyTo: byText['to work']?.id ?? '' },
    );
    assert.deepEqual(
      [fake.sent.at(-1)?.account, fake.sent.at(-1)?.quoteAuthor, fake.sent.at(-1)?.quoteTimestamp],
      [BOT, OWNER, work.timestamp],
    );
    await connectors[1]?.send({ channel: 'signal', account: 'home', chat: STRANGER }, { text: 'from home' });
    assert.equal(fake.sent.at(-1)?.account, '+15550000002');
  });
});

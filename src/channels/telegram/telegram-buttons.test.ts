// Telegram buttons against the fake Bot API: inline keyboards sent with a message (and its id as the ref), messages
// edited in place, presses handed over as commands (pressed=true) through the allow-list and the durable intake, every
// press answered, and the outbox delivering a replacement as an edit.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FakeTelegram } from '../../../test/support/fake-telegram.ts';
import { FAKE_BOT_TOKEN, startFakeTelegram } from '../../../test/support/fake-telegram.ts';
import type { TelegramOutboxRig } from '../../../test/support/telegram-outbox-rig.ts';
import { telegramOutboxRig } from '../../../test/support/telegram-outbox-rig.ts';
import { ManualClock } from '../../core/clock.ts';
import type { TelegramChannelConfig } from '../../core/config-channels.ts';
import { telegramChannelSchema } from '../../core/config-channels.ts';
import { silentLogger } from '../../core/logger.ts';
import type { ChatButton, InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import type { DurableOutbox } from '../outbox.ts';
import { EditRefusedError } from '../outbox-edit.ts';
import type { TelegramConnector } from './telegram-connector.ts';
import { createTelegramConnector } from './telegram-connector.ts';

const OWNER = 111;
const owner = { channel: 'telegram', chat: String(OWNER) };
const ask: ChatButton[][] = [
  [
    { label: 'Allow', command: '/approve k3x9' },
    { label: 'Allow for session', command: '/approve k3x9 session' },
  ],
  [{ label: 'Deny', command: '/deny k3x9' }],
];
const keyboardOf = (buttons: ChatButton[][]): { text: string; callbackData: string }[][] =>
  buttons.map((row) => row.map((b) => ({ text: b.label, callbackData: b.command })));

/** A handler that records messages; `gate` (when set) holds each hand-off until it resolves. */
function recorder(): {
  messages: InboundMessage[];
  handler: (m: InboundMessage) => Promise<void>;
  next: (n: number) => Promise<void>;
  gate: Promise<void> | null;
} {
  const waiters: (() => void)[] = [];
  const state = {
    messages: [] as InboundMessage[],
    gate: null as Promise<void> | null,
    handler: async (m: InboundMessage): Promise<void> => {
      state.messages.push(m);
      for (const wake of waiters.splice(0)) wake();
      await state.gate;
    },
    next: async (n: number): Promise<void> => {
      while (state.messages.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
  return state;
}

describe('Telegram buttons against the fake Bot API', () => {
  let fake: FakeTelegram;
  let connectors: TelegramConnector[];
  let config: TelegramChannelConfig;
  let clock: ManualClock;

  function connector(overrides: Partial<TelegramChannelConfig> = {}): TelegramConnector {
    const made = createTelegramConnector({ ...config, ...overrides }, { clock, logger: silentLogger(), env: {} });
    connectors.push(made);
    return made;
  }

  beforeEach(async () => {
    fake = await startFakeTelegram();
    connectors = [];
    clock = new ManualClock();
    config = telegramChannelSchema.parse({
      enabled: true,
      botToken: FAKE_BOT_TOKEN,
      apiRoot: fake.url,
      allowedUserIds: [OWNER],
    });
  });

  afterEach(async () => {
    for (const c of connectors) await c.stop();
    await fake.close();
  });

  it('sends the buttons as an inline keyboard and answers the message id as the ref', async () => {
    const bot = connector();
    const sent = await bot.send(owner, { text: 'Allow **Bash**(ls)?', buttons: ask });
    const [message] = fake.sent;
    assert.deepEqual(sent, { ref: String(message?.messageId) });
    assert.deepEqual(
      [message?.text, message?.parseMode, message?.keyboard],
      ['Allow Bash(ls)?', 'MarkdownV2', keyboardOf(ask)],
    );
    assert.deepEqual(await bot.send(owner, { text: 'plain' }), { ref: String(fake.sent[1]?.messageId) });
    assert.equal(fake.sent[1]?.keyboard, undefined);
  });

  it('refuses, for good, a button whose command is over 64 bytes, and sends nothing', async () => {
    const bot = connector();
    await assert.rejects(
      bot.send(owner, { text: 'x', buttons: [[{ label: 'Long', command: `/approve ${'x'.repeat(60)}` }]] }),
      (error: unknown) =>
        error instanceof DeliveryError && error.kind === 'permanent' && /64 bytes/.test(error.message),
    );
    assert.equal(fake.calls('sendMessage').length, 0);
  });

  it('edits a message in place: new text, buttons replaced or removed; unchanged counts as done', async () => {
    const bot = connector();
    const { ref } = await bot.send(owner, { text: 'Allow?', buttons: ask });
    await bot.edit(owner, ref, { text: 'Allow? **still**', buttons: [[{ label: 'Deny', command: '/deny k3x9' }]] });
    assert.deepEqual(
      [fake.sent[0]?.text, fake.sent[0]?.keyboard],
      ['Allow? still', keyboardOf([[{ label: 'Deny', command: '/deny k3x9' }]])],
    );
    await bot.edit(owner, ref, { text: 'Allowed.' });
    assert.deepEqual([fake.sent[0]?.text, fake.sent[0]?.keyboard, fake.sent.length], ['Allowed.', undefined, 1]);
    assert.deepEqual(fake.calls('editMessageText').at(-1)?.reply_markup, { inline_keyboard: [] }, 'an empty keyboard');
    await bot.edit(owner, ref, { text: 'Allowed.' });
    assert.equal(fake.edits.length, 2, 'an unchanged message is not edited, and that is no failure');
  });

  it('turns a deleted or too old message into EditRefusedError, and other failures into delivery errors', async () => {
    const bot = connector();
    await assert.rejects(bot.edit(owner, '999', { text: 'x' }), EditRefusedError);
    fake.fail('editMessageText', { status: 400, description: "Bad Request: message can't be edited" });
    const { ref } = await bot.send(owner, { text: 'old' });
    await assert.rejects(bot.edit(owner, ref, { text: 'new' }), EditRefusedError);
    fake.fail('editMessageText', { status: 500 });
    await assert.rejects(
      bot.edit(owner, ref, { text: 'new' }),
      (error: unknown) => error instanceof DeliveryError && !(error instanceof EditRefusedError) && error.retryable,
    );
    await assert.rejects(bot.edit(owner, 'not-an-id', { text: 'new' }), EditRefusedError);
  });

  it('hands a press over as its command with pressed=true, answers it once accepted, then confirms the update', async () => {
    const bot = connector();
    const inbox = recorder();
    let open!: () => void;
    inbox.gate = new Promise<void>((resolve) => (open = resolve));
    await bot.start(inbox.handler);
    const { ref } = await bot.send(owner, { text: 'Allow?', buttons: ask });
    const { updateId, queryId } = fake.press(OWNER, OWNER, Number(ref), '/approve k3x9 session', { username: 'owner' });
    await inbox.next(1);
    assert.deepEqual(inbox.messages[0], {
      id: `${OWNER}:${ref}:press:${queryId}`,
      target: owner,
      userId: String(OWNER),
      userName: 'owner',
      text: '/approve k3x9 session',
      receivedAt: clock.now(),
      pressed: true,
    });
    assert.equal(fake.callbackAnswers.length, 0, 'not answered before the handler resolved');
    assert.ok(fake.confirmedUpTo < updateId, 'not confirmed before the handler resolved');
    open();
    await fake.waitFor(() => fake.callbackAnswers.length === 1, 'the press answered');
    assert.deepEqual(fake.callbackAnswers, [{ queryId, text: undefined, showAlert: false }]);
    await fake.waitFor(() => fake.confirmedUpTo >= updateId, 'the update confirmed');

    // A reply to the press quotes the message pressed, in its topic.
    await bot.send(owner, { text: 'Allowed for this session.', replyTo: inbox.messages[0]?.id });
    assert.equal(fake.sent.at(-1)?.replyToMessageId, Number(ref));
  });

  it('gives a press in a forum topic the topic as its target', async () => {
    const bot = connector();
    const inbox = recorder();
    await bot.start(inbox.handler);
    const { ref } = await bot.send({ ...owner, chat: '-100123', thread: '42' }, { text: 'Allow?', buttons: ask });
    fake.press(-100123, OWNER, Number(ref), '/deny k3x9');
    await fake.waitFor(() => fake.callbackAnswers.length === 1, 'the press answered');
    assert.deepEqual(inbox.messages[0]?.target, { channel: 'telegram', chat: '-100123', thread: '42' });
  });

  it("refuses a stranger's press with an answer naming their id; the handler never sees it", async () => {
    const bot = connector();
    const inbox = recorder();
    await bot.start(inbox.handler);
    const { ref } = await bot.send(owner, { text: 'Allow?', buttons: ask });
    const stranger = fake.press(OWNER, 999, Number(ref), '/approve k3x9 always');
    await fake.waitFor(() => fake.callbackAnswers.length === 1, 'the stranger answered');
    const [answer] = fake.callbackAnswers;
    assert.equal(answer?.queryId, stranger.queryId);
    assert.equal(answer?.showAlert, true);
    assert.match(answer?.text ?? '', /not allowed/);
    assert.match(answer?.text ?? '', /999/);
    await fake.waitFor(() => fake.confirmedUpTo >= stranger.updateId, 'the refused press confirmed');
    assert.deepEqual(inbox.messages, []);
    assert.equal(fake.sent.length, 1, 'no message to the chat, only the answer');
  });

  it('after a crash before acceptance the press comes again with the same id; one that is never accepted is answered so', async () => {
    const first = connector();
    const never = recorder();
    never.gate = new Promise<void>(() => {}); // never accepted: the daemon "dies" here
    await first.start(never.handler);
    const { ref } = await first.send(owner, { text: 'Allow?', buttons: ask });
    const { updateId } = fake.press(OWNER, OWNER, Number(ref), '/deny k3x9');
    await never.next(1);
    await first.stop();
    assert.equal(fake.callbackAnswers.length, 0, 'not answered before acceptance');
    assert.ok(fake.confirmedUpTo < updateId);

    const second = connector();
    const inbox = recorder();
    await second.start(inbox.handler);
    await fake.waitFor(() => fake.callbackAnswers.length === 1, 'the press answered after acceptance');
    assert.equal(inbox.messages[0]?.id, never.messages[0]?.id);
    await second.stop();

    const failing = connector({ inboundMaxAttempts: 1 });
    await failing.start(async () => {
      throw new Error('disk full');
    });
    fake.press(OWNER, OWNER, Number(ref), '/deny k3x9');
    await fake.waitFor(() => fake.callbackAnswers.length === 2, 'the failed press answered');
    assert.match(fake.callbackAnswers[1]?.text ?? '', /could not be accepted/);
  });
});

describe('Telegram buttons and edits through the Outbox', () => {
  let rig: TelegramOutboxRig;
  let fake: FakeTelegram;
  let outbox: DurableOutbox;

  beforeEach(async () => {
    rig = await telegramOutboxRig('sb-tg-buttons-', OWNER);
    fake = rig.fake;
    outbox = rig.outbox;
  });

  afterEach(() => rig.close());

  it('edits the message with the buttons in place when a replacement names it, and an unchanged edit is done', async () => {
    await outbox.send(owner, { text: 'Allow Bash(ls)?', buttons: ask }, { key: 'approval-k3x9' });
    await outbox.send(owner, { text: 'Allowed once.', replaces: 'approval-k3x9' }, { key: 'approval-k3x9-decided' });
    await outbox.send(owner, { text: 'Allowed once.', replaces: 'approval-k3x9-decided' });
    await outbox.idle();
    assert.equal(fake.sent.length, 1, 'one message, edited');
    assert.deepEqual([fake.sent[0]?.text, fake.sent[0]?.keyboard], ['Allowed once.', undefined]);
    assert.deepEqual((await outbox.metrics()).sent, 3);
    assert.equal((await outbox.deadLetters()).length, 0);
  });

  it('sends the replacement anew, with its buttons, when Telegram can no longer edit the message', async () => {
    await outbox.send(owner, { text: 'Allow?', buttons: ask }, { key: 'ask' });
    await outbox.idle();
    fake.fail('editMessageText', { status: 400, description: 'Bad Request: message to edit not found' });
    const deny = [[{ label: 'Deny', command: '/deny k3x9' }]];
    await outbox.send(owner, { text: 'Still waiting', replaces: 'ask', buttons: deny });
    await outbox.idle();
    assert.deepEqual(
      fake.sent.map((m) => [m.text, m.keyboard]),
      [
        ['Allow?', keyboardOf(ask)],
        ['Still waiting', keyboardOf(deny)],
      ],
    );
  });
});

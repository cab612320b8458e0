import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { FakeTelegram } from '../../../test/support/fake-telegram.ts';
import { FAKE_BOT_TOKEN, startFakeTelegram } from '../../../test/support/fake-telegram.ts';
import type { TelegramOutboxRig } from '../../../test/support/telegram-outbox-rig.ts';
import { telegramOutboxRig } from '../../../test/support/telegram-outbox-rig.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import type { ManualClock } from '../../core/clock.ts';
import { systemClock } from '../../core/clock.ts';
import type { TelegramChannelConfig } from '../../core/config-channels.ts';
import { telegramChannelSchema } from '../../core/config-channels.ts';
import type { Logger } from '../../core/logger.ts';
import { createLogger, silentLogger } from '../../core/logger.ts';
import type { InboundMessage } from '../connector.ts';
import { formatTarget } from '../connector.ts';
import type { DurableOutbox } from '../outbox.ts';
import type { TelegramConnector } from './telegram-connector.ts';
import { createTelegramConnector } from './telegram-connector.ts';

const OWNER = 111;

/** Collects log lines written by a real pino logger. */
function capturedLogger(): { logger: Logger; lines: string[] } {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { logger: createLogger({ level: 'debug', destination: stream }), lines };
}

/** A handler that records messages and resolves at once. */
function recorder(): {
  messages: InboundMessage[];
  handler: (m: InboundMessage) => Promise<void>;
  next: (n: number) => Promise<void>;
} {
  const messages: InboundMessage[] = [];
  const waiters: (() => void)[] = [];
  return {
    messages,
    handler: async (m) => {
      messages.push(m);
      for (const wake of waiters.splice(0)) wake();
    },
    next: async (n) => {
      while (messages.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

describe('Telegram connector against the fake Bot API', () => {
  let fake: FakeTelegram;
  let connectors: TelegramConnector[];
  let config: TelegramChannelConfig;

  function connector(
    overrides: Partial<TelegramChannelConfig> = {},
    logger: Logger = silentLogger(),
    clock = systemClock(),
  ): TelegramConnector {
    const made = createTelegramConnector(
      { ...config, ...overrides },
      {
        clock,
        logger,
        env: {},
        commands: [
          { command: '/claude', description: 'Talk to Claude Code' },
          { command: 'Stats', description: 'Usage' },
        ],
      },
    );
    connectors.push(made);
    return made;
  }

  beforeEach(async () => {
    fake = await startFakeTelegram();
    connectors = [];
    config = telegramChannelSchema.parse({
      enabled: true,
      botToken: FAKE_BOT_TOKEN,
      apiRoot: fake.url,
      allowedUserIds: [OWNER],
      retryBaseDelayMs: 5,
      retryMaxDelayMs: 20,
    });
  });

  afterEach(async () => {
    for (const c of connectors) await c.stop();
    await fake.close();
  });

  it('turns an allowed user message into an InboundMessage, registers the commands, and confirms it once accepted', async () => {
    const bot = connector();
    const inbox = recorder();
    await bot.start(inbox.handler);
    assert.deepEqual(fake.commands, [
      { command: 'claude', description: 'Talk to Claude Code' },
      { command: 'stats', description: 'Usage' },
    ]);
    assert.equal(bot.botUsername, 'switchboard_test_bot');
    const { updateId, messageId } = fake.pushMessage({
      fromId: OWNER,
      text: '/claude@switchboard_test_bot fix the login bug',
      username: 'owner',
    });
    await inbox.next(1);
    const [message] = inbox.messages;
    assert.deepEqual(
      { ...message, receivedAt: 0 },
      {
        id: `${OWNER}:${messageId}`,
        target: { channel: 'telegram', chat: String(OWNER) },
        userId: String(OWNER),
        userName: 'owner',
        text: '/claude@switchboard_test_bot fix the login bug',
        receivedAt: 0,
      },
    );
    await fake.waitFor(() => fake.confirmedUpTo >= updateId, 'the update to be confirmed');
    assert.deepEqual(fake.calls('getUpdates')[0]?.allowed_updates, ['message', 'callback_query']);
  });

  it('gives forum topic messages a target with the thread, and answers in that thread', async () => {
    const bot = connector();
    const inbox = recorder();
    await bot.start(inbox.handler);
    fake.pushMessage({ fromId: OWNER, chatId: -100123, threadId: 42, text: 'status?' });
    await inbox.next(1);
    const target = inbox.messages[0]?.target;
    assert.ok(target);
    assert.equal(formatTarget(target), 'telegram||-100123|42');
    await bot.send(target, { text: 'all good', replyTo: inbox.messages[0]?.id });
    const [sent] = await fake.waitForSent(1);
    assert.deepEqual(
      [sent?.chatId, sent?.threadId, sent?.replyToMessageId, sent?.text],
      ['-100123', 42, 1, 'all good'],
    );
    await bot.typing(target);
    assert.deepEqual(fake.chatActions, [{ chatId: '-100123', action: 'typing', threadId: 42 }]);
  });

  it('refuses a stranger with a reply naming their id, and hands nothing to the engine', async () => {
    const bot = connector();
    const inbox = recorder();
    await bot.start(inbox.handler);
    const stranger = fake.pushMessage({ fromId: 999, text: '/claude rm -rf /' });
    const [reply] = await fake.waitForSent(1);
    assert.equal(reply?.chatId, '999');
    assert.match(reply?.text ?? '', /not allowed/);
    assert.match(reply?.text ?? '', /999/);
    assert.match(reply?.text ?? '', /channels\.telegram\.allowedUserIds/);
    fake.pushMessage({ fromId: OWNER, text: 'hello' });
    await inbox.next(1);
    assert.deepEqual(
      inbox.messages.map((m) => m.text),
      ['hello'],
      'only the owner reached the handler',
    );
    await fake.waitFor(() => fake.confirmedUpTo >= stranger.updateId, 'the refused update to be confirmed');
  });

  it('leaves alone a command addressed to another bot in a group (neither handed over nor answered, but confirmed)', async () => {
    const bot = connector();
    const inbox = recorder();
    await bot.start(inbox.handler);
    const group = -100777;
    const other = fake.pushMessage({ fromId: OWNER, chatId: group, text: '/claude_kill@other_bot fix-login' });
    const strangerToOther = fake.pushMessage({ fromId: 999, chatId: group, text: '/claude@other_bot hi' });
    fake.pushMessage({ fromId: OWNER, chatId: group, text: '/claude_kill@Switchboard_Test_Bot fix-login' });
    await inbox.next(1);
    assert.deepEqual(
      inbox.messages.map((m) => m.text),
      ['/claude_kill@Switchboard_Test_Bot fix-login'],
    );
    await fake.waitFor(() => fake.confirmedUpTo >= strangerToOther.updateId, 'the other bot’s updates confirmed');
    assert.ok(other.updateId < strangerToOther.updateId);
    assert.deepEqual(fake.sent, [], 'no refusal sent for a command meant for another bot');
  });

  it('after a crash before acceptance, the same update is delivered again on restart', async () => {
    const first = connector();
    let seen: InboundMessage | undefined;
    let called!: () => void;
    const handlerCalled = new Promise<void>((resolve) => (called = resolve));
    await first.start((m) => {
      seen = m;
      called();
      return new Promise<void>(() => {}); // never accepted: the daemon "dies" here
    });
    const { updateId } = fake.pushMessage({ fromId: OWNER, text: 'do not lose me' });
    await handlerCalled;
    await first.stop();
    assert.ok(fake.confirmedUpTo < updateId, 'the update was not confirmed');
    assert.deepEqual(
      fake.pendingUpdates().map((u) => u.update_id),
      [updateId],
    );

    const second = connector();
    const inbox = recorder();
    await second.start(inbox.handler);
    await inbox.next(1);
    assert.equal(inbox.messages[0]?.id, seen?.id);
    assert.equal(inbox.messages[0]?.text, 'do not lose me');
    await fake.waitFor(() => fake.confirmedUpTo >= updateId, 'the update to be confirmed after acceptance');
  });

  it('retries a failing hand-off, then tells the sender and moves on', async () => {
    const bot = connector({ inboundMaxAttempts: 3 });
    let calls = 0;
    const inbox = recorder();
    await bot.start(async (m) => {
      calls += 1;
      if (m.text === 'poison') throw new Error('disk full');
      await inbox.handler(m);
    });
    fake.pushMessage({ fromId: OWNER, text: 'poison' });
    fake.pushMessage({ fromId: OWNER, text: 'after' });
    await inbox.next(1);
    assert.equal(calls, 4, 'three attempts for the poisoned message, one for the next');
    assert.match(fake.sent[0]?.text ?? '', /could not be accepted/);
    assert.equal(inbox.messages[0]?.text, 'after');
  });

  it('keeps polling through a 409 conflict, a 500 and a 429 from getUpdates', async () => {
    const { logger, lines } = capturedLogger();
    fake.fail('getUpdates', { status: 409 });
    fake.fail('getUpdates', { status: 500 });
    fake.fail('getUpdates', { status: 429, retryAfter: 0 });
    const bot = connector({}, logger);
    const inbox = recorder();
    await bot.start(inbox.handler);
    fake.pushMessage({ fromId: OWNER, text: 'still there?' });
    await inbox.next(1);
    assert.equal(inbox.messages[0]?.text, 'still there?');
    assert.ok(
      lines.some((l) => l.includes('another process is polling this bot')),
      lines.join('\n'),
    );
  });

  it('answers a non-text message from the owner with a notice', async () => {
    const bot = connector();
    const inbox = recorder();
    await bot.start(inbox.handler);
    fake.pushUpdate({
      message: {
        message_id: 77,
        date: 1,
        chat: { id: OWNER, type: 'private' },
        from: { id: OWNER, is_bot: false, first_name: 'O' },
        sticker: {},
      },
    });
    const [reply] = await fake.waitForSent(1);
    assert.match(reply?.text ?? '', /Only text messages/);
    assert.equal(inbox.messages.length, 0);
  });

  it('refuses to start without a token, naming the keys, and with a token Telegram rejects', async () => {
    assert.throws(
      () =>
        createTelegramConnector(
          { ...config, botToken: undefined },
          { clock: systemClock(), logger: silentLogger(), env: {} },
        ),
      (error: Error & { field?: string }) =>
        error.field === 'channels.telegram.botToken' &&
        /TELEGRAM_BOT_TOKEN/.test(error.message) &&
        /botToken/.test(error.message),
    );
    const fromEnv = createTelegramConnector(
      { ...config, botToken: undefined, botTokenEnv: 'MY_BOT' },
      { clock: systemClock(), logger: silentLogger(), env: { MY_BOT: FAKE_BOT_TOKEN } },
    );
    connectors.push(fromEnv);
    await fromEnv.start(async () => {});
    const wrong = connector({ botToken: '42:wrong-token' });
    await assert.rejects(
      wrong.start(async () => {}),
      (error: Error & { field?: string }) => error.field === 'channels.telegram.botToken' && /401/.test(error.message),
    );
  });

  it('never writes the token to a log line, even when requests fail', async () => {
    const { logger, lines } = capturedLogger();
    const dead = await startFakeTelegram();
    const deadUrl = dead.url;
    await dead.close();
    const bot = connector({ apiRoot: deadUrl }, logger);
    await bot.start(async () => {});
    await waitFor(
      'two failed requests logged',
      () => lines.filter((l) => l.includes('Telegram request failed')).length >= 2,
      10_000,
    );
    await bot.send({ channel: 'telegram', chat: '1' }, { text: 'x' }).then(
      () => assert.fail('send to an unreachable server must throw'),
      (error: Error) => lines.push(error.message),
    );
    fake.fail('getUpdates', { status: 500 });
    const live = connector({}, logger);
    await live.start(async () => {});
    await waitFor('the 500 logged', () => lines.some((l) => l.includes('500 Internal Server Error')), 10_000);
    const secret = FAKE_BOT_TOKEN.split(':')[1] ?? FAKE_BOT_TOKEN;
    for (const line of lines) assert.ok(!line.includes(secret), `token leaked: ${line}`);
  });
});

describe('Telegram delivery through the Outbox', () => {
  let rig: TelegramOutboxRig;
  let fake: FakeTelegram;
  let clock: ManualClock;
  let outbox: DurableOutbox;
  const owner = { channel: 'telegram', chat: String(OWNER) };

  beforeEach(async () => {
    rig = await telegramOutboxRig('sb-tg-outbox-', OWNER);
    fake = rig.fake;
    clock = rig.clock;
    outbox = rig.outbox;
  });

  afterEach(() => rig.close());

  it('splits a long answer into messages within 4096 characters, in order', async () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) =>
      `Paragraph ${i}: ${'lorem ipsum dolor sit amet. '.repeat(12)}`.trim(),
    );
    await outbox.send(owner, { text: paragraphs.join('\n\n') });
    await outbox.idle();
    assert.ok(fake.sent.length >= 3, `${fake.sent.length} messages`);
    for (const message of fake.sent) assert.ok([...message.text].length <= 4096);
    assert.equal(fake.sent.map((m) => m.text).join('\n\n'), paragraphs.join('\n\n'));
  });

  it('sends MarkdownV2 that the fake accepts, keeping code and bold', async () => {
    const text = '**Done.** Changed `src/a.ts` (+3/-1):\n```ts\nconst x = a?.b ?? `c`;\n```\n_not italic_ 100% [ok]!';
    await outbox.send(owner, { text });
    await outbox.idle();
    const [sent] = fake.sent;
    assert.equal(sent?.parseMode, 'MarkdownV2');
    assert.equal(sent?.text, 'Done. Changed src/a.ts (+3/-1):\nconst x = a?.b ?? `c`;\n_not italic_ 100% [ok]!');
    assert.deepEqual(
      sent?.entities.map((e) => e.type),
      ['bold', 'code', 'pre'],
    );
  });

  it('falls back to plain text when Telegram cannot parse the entities', async () => {
    fake.fail('sendMessage', {
      status: 400,
      description: "Bad Request: can't parse entities: Can't find end of Bold entity at byte offset 3",
    });
    await outbox.send(owner, { text: 'a **b** c' });
    await outbox.idle();
    assert.equal(fake.sent.length, 1);
    assert.equal(fake.sent[0]?.parseMode, undefined);
    assert.equal(fake.sent[0]?.text, 'a **b** c');
    assert.equal((await outbox.metrics()).sent, 1);
  });

  it("honours Telegram's retry_after (429) through the outbox", async () => {
    fake.fail('sendMessage', { status: 429, retryAfter: 3 });
    await outbox.send(owner, { text: 'rate limited' });
    await outbox.idle();
    assert.equal(fake.sent.length, 0);
    assert.equal((await outbox.metrics()).retried, 1);
    clock.advance(2_999);
    await outbox.idle();
    assert.equal(fake.sent.length, 0, 'not before retry_after');
    clock.advance(1);
    await outbox.idle();
    assert.equal(fake.sent[0]?.text, 'rate limited');
  });

  it('retries a 500 with backoff and dead-letters a chat Telegram does not know', async () => {
    fake.fail('sendMessage', { status: 500 });
    await outbox.send(owner, { text: 'flaky' });
    await outbox.idle();
    clock.advance(500);
    await outbox.idle();
    assert.equal(fake.sent[0]?.text, 'flaky');
    fake.fail('sendMessage', { status: 400, description: 'Bad Request: chat not found' });
    await outbox.send({ channel: 'telegram', chat: '-1009' }, { text: 'lost' });
    await outbox.idle();
    assert.match((await outbox.deadLetters())[0]?.error ?? '', /chat not found/);
  });
});

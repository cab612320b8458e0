import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import type { TestStore } from '../../test/support/test-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import type { OutboxConfig } from '../core/config-channels.ts';
import { outboxSchema } from '../core/config-channels.ts';
import type { Logger } from '../core/logger.ts';
import { createLogger, silentLogger } from '../core/logger.ts';
import type { ChannelTarget, Connector, DeliveryKey, InboundHandler, OutboundMessage } from './connector.ts';
import { DeliveryError } from './delivery-error.ts';
import type { DurableOutbox } from './outbox.ts';
import { createOutbox, INTERRUPTED_SEND, SENT_KEY_RETENTION_MS } from './outbox.ts';

interface Delivery {
  target: ChannelTarget;
  message: OutboundMessage;
  at: number;
}

/** An in-memory connector whose sends can be scripted to fail or hang. */
class ScriptedConnector implements Connector {
  readonly channel: string;
  readonly maxMessageLength: number;
  /** Whether the outbox may resend a crash-interrupted message under the same delivery key (the web chat's contract). */
  idempotent = false;
  /** The delivery key of every attempt, in order. */
  readonly keys: (string | undefined)[] = [];
  readonly delivered: Delivery[] = [];
  /** Sends attempted (successful or not), with the clock time. */
  readonly attempts: { text: string; at: number }[] = [];
  /** Each entry decides one upcoming send: an error to throw, or 'hang' to never settle. */
  readonly script: (Error | 'hang')[] = [];
  /** Decides sends when the script is empty: return an error to fail. */
  failWhen: ((message: OutboundMessage) => Error | undefined) | null = null;
  /** While set, every send waits for it before it delivers (the test decides when a delivery may land). */
  hold: Promise<void> | null = null;
  #clock: ManualClock;
  #waiters: (() => void)[] = [];

  constructor(channel: string, clock: ManualClock, maxMessageLength = 1000) {
    this.channel = channel;
    this.maxMessageLength = maxMessageLength;
    this.#clock = clock;
  }

  async start(_onMessage: InboundHandler): Promise<void> {}
  async stop(): Promise<void> {}

  async send(target: ChannelTarget, message: OutboundMessage, delivery?: DeliveryKey): Promise<void> {
    this.attempts.push({ text: message.text, at: this.#clock.now() });
    this.keys.push(delivery?.key);
    const step = this.script.shift() ?? this.failWhen?.(message);
    if (step === 'hang') return new Promise<void>(() => {});
    if (step) throw step;
    await this.hold;
    assert.ok(message.text.length <= this.maxMessageLength, 'the outbox splits to the connector limit');
    this.delivered.push({ target, message, at: this.#clock.now() });
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Resolves once `count` messages were delivered. */
  async waitDelivered(count: number): Promise<void> {
    while (this.delivered.length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

const chat = (id: string): ChannelTarget => ({ channel: 'chat', chat: id });

describe('DurableOutbox', () => {
  let dir: { path: string; remove: () => void };
  let store: TestStore;
  let clock: ManualClock;
  let outbox: DurableOutbox;
  let connector: ScriptedConnector;

  function build(config: Partial<OutboxConfig> = {}, logger: Logger = silentLogger(), random = () => 0): DurableOutbox {
    return createOutbox({ db: store.db, clock, logger, config: outboxSchema.parse(config), random });
  }

  beforeEach(async () => {
    dir = tempDir('sb-outbox-');
    store = await openTestStore(join(dir.path, 'state.db'));
    clock = new ManualClock();
    connector = new ScriptedConnector('chat', clock);
    outbox = build();
    outbox.register(connector);
  });

  afterEach(async () => {
    await outbox.stop();
    await store.close();
    dir.remove();
  });

  it('records the message before returning and delivers it in the background', async () => {
    // The delivery is held until the test has looked: over PostgreSQL's pool it could land before the metrics read.
    let release = (): void => {};
    connector.hold = new Promise<void>((resolve) => (release = resolve));
    await outbox.start();
    await outbox.send(chat('1'), { text: 'hello', replyTo: '1:7' });
    assert.equal((await outbox.metrics()).pending, 1, 'stored synchronously');
    assert.equal(connector.delivered.length, 0, 'send does not wait for delivery');
    release();
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.map((d) => [d.target, d.message]),
      [[chat('1'), { text: 'hello', replyTo: '1:7' }]],
    );
    assert.deepEqual(
      { ...(await outbox.metrics()), byChannel: undefined },
      {
        sent: 1,
        retried: 0,
        failed: 0,
        noConnector: 0,
        pending: 0,
        deadLetters: 0,
        byChannel: undefined,
      },
    );
  });

  it('refuses malformed targets and empty texts, naming the field', async () => {
    await assert.rejects(outbox.send({ channel: 'chat', chat: '' }, { text: 'x' }), /target\.chat/);
    await assert.rejects(outbox.send({ channel: 'a|b', chat: '1' }, { text: 'x' }), /target\.channel/);
    await assert.rejects(outbox.send(chat('1'), { text: '  ' }), /text/);
    assert.equal((await outbox.metrics()).pending, 0);
  });

  it('splits a long text to the connector limit and sends the parts in order, replying with the first only', async () => {
    const small = new ScriptedConnector('small', clock, 20);
    outbox.register(small);
    await outbox.start();
    await outbox.send(
      { channel: 'small', chat: 'x' },
      { text: 'one two three four five six seven eight nine ten', replyTo: '9' },
    );
    await outbox.idle();
    assert.deepEqual(
      small.delivered.map((d) => d.message.text),
      ['one two three four', 'five six seven eight', 'nine ten'],
    );
    assert.deepEqual(
      small.delivered.map((d) => d.message.replyTo),
      ['9', undefined, undefined],
    );
    assert.equal((await outbox.metrics()).sent, 1);
  });

  it('retries with exponential backoff on the injected clock, then delivers', async () => {
    const boom = new Error('connection reset');
    connector.script.push(boom, boom, boom);
    await outbox.start();
    const t0 = clock.now();
    await outbox.send(chat('1'), { text: 'persistent' });
    await outbox.idle();
    assert.equal(connector.attempts.length, 1);
    // random() = 0 → the lower edge of each jittered step: 500, 1000, 2000 ms.
    for (const [wait, attempts] of [
      [499, 1],
      [1, 2],
      [999, 2],
      [1, 3],
      [1999, 3],
      [1, 4],
    ] as const) {
      clock.advance(wait);
      await outbox.idle();
      assert.equal(connector.attempts.length, attempts, `after +${wait} ms`);
    }
    assert.deepEqual(
      connector.attempts.map((a) => a.at - t0),
      [0, 500, 1500, 3500],
    );
    assert.equal(connector.delivered.length, 1);
    const metrics = await outbox.metrics();
    assert.equal(metrics.retried, 3);
    assert.equal(metrics.sent, 1);
    assert.deepEqual(metrics.byChannel.chat, { sent: 1, retried: 3, failed: 0 });
  });

  it("honours a server's retry-after instead of the backoff", async () => {
    connector.script.push(
      new DeliveryError('429 Too Many Requests', { kind: 'rate_limited', retryAfterMs: 7000, status: 429 }),
    );
    await outbox.start();
    await outbox.send(chat('1'), { text: 'later' });
    await outbox.idle();
    clock.advance(6999);
    await outbox.idle();
    assert.equal(connector.attempts.length, 1, 'not before the retry-after');
    clock.advance(1);
    await outbox.idle();
    assert.equal(connector.delivered.length, 1);
  });

  it('never lets a later message overtake an earlier one to the same chat, while other chats go on', async () => {
    connector.failWhen = (m) =>
      m.text === 'first' && connector.attempts.filter((a) => a.text === 'first').length <= 2
        ? new Error('flaky')
        : undefined;
    await outbox.start();
    await outbox.send(chat('A'), { text: 'first' });
    await outbox.send(chat('A'), { text: 'second' });
    await outbox.send(chat('B'), { text: 'other chat' });
    await outbox.send(chat('A'), { text: 'third' });
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.map((d) => d.message.text),
      ['other chat'],
      'chat B is not held up by chat A',
    );
    assert.ok(!connector.attempts.some((a) => a.text === 'second'), 'second waits behind first');
    clock.advance(10_000);
    await outbox.idle();
    clock.advance(10_000);
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.filter((d) => d.target.chat === 'A').map((d) => d.message.text),
      ['first', 'second', 'third'],
    );
  });

  it('a hanging connector delays neither other channels nor other chats, and times out into a retry', async () => {
    const slow = new ScriptedConnector('slow', clock);
    slow.script.push('hang');
    outbox.register(slow);
    await outbox.start();
    await outbox.send({ channel: 'slow', chat: '1' }, { text: 'stuck' });
    await outbox.send(chat('1'), { text: 'free' });
    await connector.waitDelivered(1);
    assert.equal(connector.delivered[0]?.message.text, 'free');
    clock.advance(30_000); // sendTimeoutMs
    await outbox.idle();
    clock.advance(500);
    await slow.waitDelivered(1);
    assert.equal(slow.attempts.length, 2);
    await outbox.idle();
    assert.equal((await outbox.metrics()).retried, 1);
  });

  it('dead-letters a message after the last attempt, logs it, and moves on to the next one', async () => {
    const lines = new PassThrough();
    const logged: string[] = [];
    lines.on('data', (chunk: Buffer) => logged.push(...chunk.toString().split('\n').filter(Boolean)));
    outbox = build({ maxAttempts: 3 }, createLogger({ level: 'info', destination: lines }));
    outbox.register(connector);
    connector.failWhen = (m) => (m.text === 'doomed' ? new Error('server down') : undefined);
    await outbox.start();
    await outbox.send(chat('1'), { text: 'doomed' });
    await outbox.send(chat('1'), { text: 'next' });
    for (let i = 0; i < 5; i += 1) {
      await outbox.idle();
      clock.advance(60_000);
    }
    await outbox.idle();
    assert.equal(connector.attempts.filter((a) => a.text === 'doomed').length, 3);
    assert.deepEqual(
      connector.delivered.map((d) => d.message.text),
      ['next'],
    );
    const dead = await outbox.deadLetters();
    assert.equal(dead.length, 1);
    assert.deepEqual(
      [dead[0]?.text, dead[0]?.attempts, dead[0]?.error, dead[0]?.target],
      ['doomed', 3, 'server down', chat('1')],
    );
    const metrics = await outbox.metrics();
    assert.deepEqual(
      [metrics.failed, metrics.retried, metrics.sent, metrics.deadLetters, metrics.pending],
      [1, 2, 1, 1, 0],
    );
    assert.ok(
      logged.some((l) => l.includes('dead letter') && l.includes('"level":50')),
      logged.join('\n'),
    );
  });

  it('dead-letters at once a message the service refuses for good, and can retry it on request', async () => {
    connector.script.push(new DeliveryError('Bad Request: chat not found', { kind: 'permanent', status: 400 }));
    await outbox.start();
    await outbox.send(chat('1'), { text: 'nowhere' });
    await outbox.idle();
    assert.equal(connector.attempts.length, 1);
    const [dead] = await outbox.deadLetters();
    assert.equal(dead?.error, 'Bad Request: chat not found');
    assert.equal(await outbox.retry(dead?.id ?? -1), true);
    await outbox.idle();
    assert.equal(connector.delivered[0]?.message.text, 'nowhere');
    assert.equal(await outbox.retry(dead?.id ?? -1), false, 'nothing left to retry');
  });

  it('keeps a message for a channel without a connector as failed, counted and listed', async () => {
    await outbox.start();
    await outbox.send({ channel: 'discord', chat: '42' }, { text: 'hello?' });
    await outbox.send(chat('1'), { text: 'fine' });
    await outbox.idle();
    const metrics = await outbox.metrics();
    assert.deepEqual([metrics.noConnector, metrics.failed, metrics.sent, metrics.deadLetters], [1, 1, 1, 1]);
    assert.match((await outbox.deadLetters())[0]?.error ?? '', /no connector for channel "discord"/);
  });

  it('survives a restart: pending messages (and the rest of a half-sent one) are delivered by a new outbox', async () => {
    connector.failWhen = () => new Error('offline');
    const small = new ScriptedConnector('small', clock, 10);
    small.failWhen = (m) => (m.text === 'cccc' ? new Error('down') : undefined);
    outbox.register(small);
    await outbox.start();
    await outbox.send(chat('1'), { text: 'queued one' });
    await outbox.send({ channel: 'small', chat: 'z' }, { text: 'aaaa bbbb cccc' });
    await outbox.idle();
    // The first part went out, the second failed: the store remembers how far it got.
    assert.deepEqual(
      small.delivered.map((d) => d.message.text),
      ['aaaa bbbb'],
    );
    assert.equal(connector.delivered.length, 0);
    await outbox.stop();
    await store.close();

    store = await openTestStore(join(dir.path, 'state.db'));
    const again = new ScriptedConnector('chat', clock);
    const smallAgain = new ScriptedConnector('small', clock, 10);
    outbox = build();
    await outbox.send(chat('1'), { text: 'queued two' });
    assert.equal((await outbox.metrics()).pending, 3);
    outbox.register(again);
    outbox.register(smallAgain);
    await outbox.start();
    await outbox.idle();
    clock.advance(10_000);
    await outbox.idle();
    assert.deepEqual(
      again.delivered.map((d) => d.message.text),
      ['queued one', 'queued two'],
    );
    assert.deepEqual(
      smallAgain.delivered.map((d) => d.message.text),
      ['cccc'],
      'only the undelivered part is sent',
    );
    assert.equal((await outbox.metrics()).pending, 0);
  });

  it('delivers nothing before start and everything in order after it', async () => {
    await outbox.send(chat('1'), { text: 'a' });
    await outbox.send(chat('1'), { text: 'b' });
    await outbox.idle();
    assert.equal(connector.attempts.length, 0);
    await outbox.start();
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.map((d) => d.message.text),
      ['a', 'b'],
    );
  });

  it('records a message once per idempotency key, also after it was delivered, until the key is pruned', async () => {
    await outbox.start();
    await outbox.send(chat('1'), { text: 'reply' }, { key: 'turn-1' });
    await outbox.send(chat('1'), { text: 'reply' }, { key: 'turn-1' });
    await outbox.idle();
    await outbox.send(chat('1'), { text: 'reply' }, { key: 'turn-1' });
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.map((d) => d.message.text),
      ['reply'],
    );
    assert.equal((await outbox.metrics()).pending, 0, 'a delivered keyed row does not count as pending');
    await outbox.stop();
    clock.advance(SENT_KEY_RETENTION_MS + 1);
    outbox = build();
    outbox.register(connector);
    await outbox.start();
    await outbox.send(chat('1'), { text: 'reply' }, { key: 'turn-1' });
    await outbox.idle();
    assert.equal(connector.delivered.length, 2, 'after the retention the key is forgotten');
  });

  /** Leaves a message claimed, as a crash inside its send would: the send hangs and the outbox is stopped. */
  async function interruptedSend(text: string): Promise<void> {
    connector.script.push('hang');
    await outbox.start();
    await outbox.send(chat('1'), { text });
    await waitFor('the send to begin', () => connector.attempts.length === 1);
    await outbox.stop();
  }

  it('after a crash mid-send, an idempotent connector gets the message again under the same delivery key', async () => {
    await interruptedSend('once only');
    const again = new ScriptedConnector('chat', clock);
    again.idempotent = true;
    outbox = build();
    outbox.register(again);
    await outbox.start();
    await outbox.idle();
    assert.deepEqual(
      again.delivered.map((d) => d.message.text),
      ['once only'],
    );
    assert.deepEqual(again.keys, [connector.keys[0]], 'the same delivery key as the interrupted send');
    assert.equal((await outbox.metrics()).retried, 0, 'not counted as a failed attempt');
  });

  it('after a crash mid-send, a connector without idempotency gets it again as a failed attempt, and a dead letter at maxAttempts', async () => {
    await interruptedSend('maybe twice');
    const again = new ScriptedConnector('chat', clock);
    outbox = build({ maxAttempts: 2 });
    outbox.register(again);
    await outbox.start();
    await outbox.idle();
    assert.deepEqual(
      again.delivered.map((d) => d.message.text),
      ['maybe twice'],
      'at least once',
    );

    // A message whose sends keep being interrupted ends as a dead letter.
    again.script.push('hang');
    await outbox.send(chat('1'), { text: 'crashes every time' });
    await waitFor('its send to begin', () => again.attempts.some((a) => a.text === 'crashes every time'));
    await outbox.stop();
    const hanging = new ScriptedConnector('chat', clock);
    hanging.script.push('hang');
    outbox = build({ maxAttempts: 2 });
    outbox.register(hanging);
    await outbox.start();
    await waitFor('the send again after the first interruption', () => hanging.attempts.length === 1);
    const sending = await store.db
      .selectFrom('outbox_messages')
      .select('attempts')
      .where('status', '=', 'sending')
      .executeTakeFirst();
    assert.equal(sending?.attempts, 1, 'counted as a failed attempt');
    await outbox.stop();
    outbox = build({ maxAttempts: 2 });
    outbox.register(new ScriptedConnector('chat', clock));
    await outbox.start();
    await outbox.idle();
    assert.equal((await outbox.metrics()).deadLetters, 1);
    assert.equal((await outbox.deadLetters())[0]?.error, INTERRUPTED_SEND);
  });
});

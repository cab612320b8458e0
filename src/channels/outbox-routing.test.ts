// Where the outbox sends: to the connector of the target's account (a channel with one connector needs no account
// segment), and into the thread an earlier message opened on connectors that have threads.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { openTestStore } from '../../test/support/test-store.ts';
import { ManualClock } from '../core/clock.ts';
import { outboxSchema } from '../core/config-channels.ts';
import { silentLogger } from '../core/logger.ts';
import type { ChannelTarget, Connector, InboundHandler, OutboundMessage, SentMessage } from './connector.ts';
import type { DurableOutbox } from './outbox.ts';
import { createOutbox } from './outbox.ts';

/** A connector that records what it sends and numbers its refs. */
class Recording implements Connector {
  readonly maxMessageLength = 1000;
  readonly idempotent = false;
  readonly sends: { target: ChannelTarget; text: string; ref: string }[] = [];
  readonly channel: string;
  readonly account: string | undefined;
  readonly threads: boolean;
  #next = 1;
  constructor(channel: string, account?: string, threads = false) {
    this.channel = channel;
    this.account = account;
    this.threads = threads;
  }
  async start(_onMessage: InboundHandler): Promise<void> {}
  async stop(): Promise<void> {}
  async send(target: ChannelTarget, message: OutboundMessage): Promise<SentMessage> {
    const ref = `${this.account ?? 'default'}-${this.#next++}`;
    this.sends.push({ target, text: message.text, ref });
    return { ref };
  }
}

let outbox: DurableOutbox;

beforeEach(async () => {
  outbox = createOutbox({
    db: (await openTestStore(':memory:')).db,
    config: outboxSchema.parse({}),
    clock: new ManualClock(),
    logger: silentLogger(),
  });
});

afterEach(async () => {
  await outbox.stop();
});

describe('outbox routing', () => {
  it("sends to the target's account; a channel with one connector needs no account segment", async () => {
    const work = new Recording('slack', 'work');
    const home = new Recording('slack', 'home');
    const tg = new Recording('telegram', 'personal');
    for (const c of [work, home, tg]) outbox.register(c);
    await outbox.start();
    await outbox.send({ channel: 'slack', account: 'home', chat: 'C1' }, { text: 'to home' });
    await outbox.send({ channel: 'slack', account: 'work', chat: 'C1' }, { text: 'to work' });
    await outbox.send({ channel: 'telegram', chat: '42' }, { text: 'to the only bot' });
    await outbox.send({ channel: 'slack', chat: 'C1' }, { text: 'which workspace?' });
    await outbox.send({ channel: 'slack', account: 'gone', chat: 'C1' }, { text: 'no such account' });
    await outbox.idle();
    assert.deepEqual(
      home.sends.map((s) => s.text),
      ['to home'],
    );
    assert.deepEqual(
      work.sends.map((s) => s.text),
      ['to work'],
    );
    assert.deepEqual(
      tg.sends.map((s) => s.text),
      ['to the only bot'],
    );
    const dead = await outbox.deadLetters();
    assert.deepEqual(dead.map((d) => [d.text, d.error]).sort(), [
      ['no such account', 'no connector for account "gone" of channel "slack"'],
      ['which workspace?', 'no connector for channel "slack"'],
    ]);
  });

  it('a message goes in the thread its threadOf message opened, on connectors with threads only', async () => {
    const slack = new Recording('slack', undefined, true);
    const tg = new Recording('telegram');
    outbox.register(slack);
    outbox.register(tg);
    await outbox.start();
    for (const target of [
      { channel: 'slack', chat: 'C1' },
      { channel: 'telegram', chat: '42' },
    ]) {
      await outbox.send(target, { text: 'launched' }, { key: `thread-s1-${target.channel}` });
      await outbox.send(target, { text: 'output', threadOf: `thread-s1-${target.channel}` });
      await outbox.send(target, { text: 'unknown thread', threadOf: 'never-sent' });
    }
    await outbox.send(
      { channel: 'slack', chat: 'C1', thread: 'T9' },
      { text: 'own thread', threadOf: 'thread-s1-slack' },
    );
    await outbox.idle();
    // The message naming its own thread is another conversation (its own lane): compared without order, and it may
    // go out first (over PostgreSQL's pool it can), so the ref 'launched' got is read, not assumed to be the first.
    const launched = slack.sends.find((s) => s.text === 'launched')?.ref;
    assert.ok(launched);
    assert.deepEqual(slack.sends.map((s) => [s.text, s.target.thread]).sort(), [
      ['launched', undefined],
      ['output', launched],
      ['own thread', 'T9'],
      ['unknown thread', undefined],
    ]);
    assert.deepEqual(
      tg.sends.map((s) => [s.text, s.target.thread]),
      [
        ['launched', undefined],
        ['output', undefined],
        ['unknown thread', undefined],
      ],
    );
  });
});

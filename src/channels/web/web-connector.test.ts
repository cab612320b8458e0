import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { openTestStore, type TestStore } from '../../../test/support/test-store.ts';
import { ManualClock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config-load.ts';
import { AppError } from '../../core/errors.ts';
import { silentLogger } from '../../core/logger.ts';
import type { WebMessage } from '../../store/web-transcript.ts';
import type { InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import { WebConnector } from './web-connector.ts';

const CHAT = 'chat-aaaa1111';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('WebConnector', () => {
  let dir: { path: string; remove: () => void };
  let db: TestStore;
  let clock: ManualClock;
  let received: InboundMessage[];
  let connector: WebConnector;

  const build = (overrides: Record<string, unknown> = {}): WebConnector => {
    const { config } = loadConfig({ home: dir.path, env: {}, overrides: { channels: { web: overrides } } });
    return new WebConnector({ db: db.db, config: config.channels.web, clock, logger: silentLogger() });
  };

  beforeEach(async () => {
    dir = tempDir();
    db = await openTestStore(join(dir.path, 'state.db'));
    clock = new ManualClock();
    received = [];
    connector = build();
    await connector.start(async (m) => {
      received.push(m);
    });
  });
  afterEach(async () => {
    await connector.stop();
    await db.close();
    dir.remove();
  });

  it('hands a page message to the handler as an InboundMessage of web|<chat> and marks it accepted', async () => {
    const result = await connector.accept(CHAT, { id: 'msg-00000001', text: 'hello' });
    assert.equal(result.duplicate, false);
    assert.equal(result.message.status, 'accepted');
    assert.deepEqual(received, [
      {
        id: `${CHAT}:msg-00000001`,
        target: { channel: 'web', chat: CHAT },
        userId: 'local',
        text: 'hello',
        receivedAt: clock.now(),
      },
    ]);
  });

  it('hands the same message id over once, also when the retry arrives while the first is in flight', async () => {
    const gate = deferred();
    let calls = 0;
    await connector.start(async () => {
      calls += 1;
      await gate.promise;
    });
    const first = connector.accept(CHAT, { id: 'msg-00000002', text: 'once' });
    const second = connector.accept(CHAT, { id: 'msg-00000002', text: 'once' });
    gate.resolve();
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.duplicate, false);
    assert.equal(b.duplicate, true);
    const third = await connector.accept(CHAT, { id: 'msg-00000002', text: 'once' });
    assert.equal(third.duplicate, true);
    assert.equal(calls, 1);
    assert.equal((await connector.follow(CHAT, null, { onMessage: () => {}, onClose: () => {} })).history.length, 1);
  });

  it('refuses a reused message id with another text', async () => {
    await connector.accept(CHAT, { id: 'msg-00000003', text: 'one' });
    await assert.rejects(
      connector.accept(CHAT, { id: 'msg-00000003', text: 'two' }),
      (e: unknown) => e instanceof AppError && e.kind === 'conflict',
    );
  });

  it('marks a message failed when the handler throws, and accepts it on a retry with the same id', async () => {
    let fail = true;
    await connector.start(async (m) => {
      if (fail) throw new Error('inbox is full');
      received.push(m);
    });
    await assert.rejects(
      connector.accept(CHAT, { id: 'msg-00000004', text: 'retry me' }),
      /could not be accepted: inbox is full/,
    );
    const seen: WebMessage[] = [];
    const feed = await connector.follow(CHAT, null, { onMessage: (m) => seen.push(m), onClose: () => {} });
    assert.equal(feed.history[0]?.status, 'failed');
    assert.equal(feed.history[0]?.error, 'inbox is full');
    fail = false;
    const retried = await connector.accept(CHAT, { id: 'msg-00000004', text: 'retry me' });
    assert.equal(retried.duplicate, false);
    assert.deepEqual(
      seen.map((m) => m.status),
      ['pending', 'accepted'],
    );
    assert.equal(received.length, 1);
    feed.close();
  });

  it('refuses page messages when not started', async () => {
    await connector.stop();
    await assert.rejects(
      connector.accept(CHAT, { id: 'msg-00000005', text: 'x' }),
      (e: unknown) => e instanceof AppError && e.kind === 'unavailable',
    );
  });

  it('keeps sent messages in the transcript and feeds them live, then resumes after a version', async () => {
    const live: WebMessage[] = [];
    const feed = await connector.follow(CHAT, null, { onMessage: (m) => live.push(m), onClose: () => {} });
    assert.deepEqual(feed.history, []);
    await connector.send({ channel: 'web', chat: CHAT }, { text: 'first' });
    feed.close();
    await connector.send({ channel: 'web', chat: CHAT }, { text: 'second' });
    await connector.send({ channel: 'web', chat: CHAT }, { text: 'third' });
    assert.deepEqual(
      live.map((m) => m.text),
      ['first'],
    );
    const resumed = await connector.follow(CHAT, live[0]?.version ?? 0, { onMessage: () => {}, onClose: () => {} });
    assert.deepEqual(
      resumed.history.map((m) => [m.role, m.text, m.status]),
      [
        ['agent', 'second', 'sent'],
        ['agent', 'third', 'sent'],
      ],
    );
    resumed.close();
  });

  it('loses nothing between the history and the live feed when a message lands while the history is read', async () => {
    await connector.send({ channel: 'web', chat: CHAT }, { text: 'before' });
    const live: WebMessage[] = [];
    const sending = connector.send({ channel: 'web', chat: CHAT }, { text: 'during' });
    const feed = await connector.follow(CHAT, 0, { onMessage: (m) => live.push(m), onClose: () => {} });
    await sending;
    const versions = new Map([...feed.history, ...live].map((m) => [m.version, m.text]));
    assert.deepEqual([...versions.values()].sort(), ['before', 'during']);
    feed.close();
  });

  it('keeps transcripts per chat, survives a reopen of the database, and keeps only the newest messages', async () => {
    const small = build({ transcriptMaxMessages: 3, historyLimit: 2 });
    for (const text of ['a', 'b', 'c', 'd']) await small.send({ channel: 'web', chat: CHAT }, { text });
    await small.send({ channel: 'web', chat: 'other-chat-1' }, { text: 'elsewhere' });
    await db.close();
    db = await openTestStore(join(dir.path, 'state.db'));
    const reopened = build({ transcriptMaxMessages: 3, historyLimit: 2 });
    const none = { onMessage: () => {}, onClose: () => {} };
    assert.deepEqual(
      (await reopened.follow(CHAT, null, none)).history.map((m) => m.text),
      ['c', 'd'],
    );
    assert.deepEqual(
      (await reopened.follow(CHAT, 0, none)).history.map((m) => m.text),
      ['b', 'c', 'd'],
    );
    assert.deepEqual(
      (await reopened.follow('other-chat-1', 0, none)).history.map((m) => m.text),
      ['elsewhere'],
    );
    connector = reopened;
  });

  it('refuses targets that are not web chats and texts over the limit, for good', async () => {
    const permanent = (pattern: RegExp) => (e: unknown) =>
      e instanceof DeliveryError && e.kind === 'permanent' && pattern.test(e.message);
    await assert.rejects(
      connector.send({ channel: 'telegram', chat: '42' }, { text: 'x' }),
      permanent(/target.channel/),
    );
    await assert.rejects(connector.send({ channel: 'web', chat: 'a|b' }, { text: 'x' }), /target.chat/);
    await assert.rejects(
      connector.send({ channel: 'web', account: 'x', chat: CHAT }, { text: 'x' }),
      /no accounts or threads/,
    );
    await assert.rejects(
      connector.send({ channel: 'web', chat: CHAT }, { text: 'x'.repeat(connector.maxMessageLength + 1) }),
      /over the web limit/,
    );
  });

  it('closes every feed on stop', async () => {
    let closed = 0;
    await connector.follow(CHAT, null, { onMessage: () => {}, onClose: () => (closed += 1) });
    await connector.follow('other-chat-1', null, { onMessage: () => {}, onClose: () => (closed += 1) });
    await connector.stop();
    assert.equal(closed, 2);
  });
});

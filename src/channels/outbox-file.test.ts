import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { tempDir } from '../../test/support/temp-dir.ts';
import type { TestStore } from '../../test/support/test-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { ManualClock } from '../core/clock.ts';
import { outboxSchema } from '../core/config-channels.ts';
import { silentLogger } from '../core/logger.ts';
import type {
  ChannelTarget,
  Connector,
  DeliveryKey,
  InboundHandler,
  OutboundMessage,
  SentMessage,
} from './connector.ts';
import type { DurableOutbox } from './outbox.ts';
import { createOutbox } from './outbox.ts';
import { MAX_FILE_BYTES } from './outbox-file.ts';

/** An in-memory connector that records what it is given, with or without files; a send can be made to hang. */
class FileConnector implements Connector {
  readonly channel = 'chat';
  readonly maxMessageLength: number;
  readonly files: boolean;
  maxFileCaptionLength: number | undefined;
  idempotent = false;
  readonly delivered: { message: OutboundMessage; key: string | undefined }[] = [];
  readonly edits: string[] = [];
  hangNext = false;
  #sent = 0;

  constructor(files: boolean, maxMessageLength = 1000, maxFileCaptionLength?: number) {
    this.files = files;
    this.maxMessageLength = maxMessageLength;
    this.maxFileCaptionLength = maxFileCaptionLength;
  }

  async start(_onMessage: InboundHandler): Promise<void> {}
  async stop(): Promise<void> {}

  async send(_target: ChannelTarget, message: OutboundMessage, delivery?: DeliveryKey): Promise<SentMessage> {
    if (this.hangNext) {
      this.hangNext = false;
      return new Promise<never>(() => {});
    }
    assert.ok(message.text.length <= this.maxMessageLength, 'the outbox splits to the connector limit');
    this.delivered.push({ message, key: delivery?.key });
    this.#sent += 1;
    return { ref: `m${this.#sent}` };
  }

  async edit(_target: ChannelTarget, ref: string, _message: OutboundMessage): Promise<void> {
    this.edits.push(ref);
  }
}

const chat: ChannelTarget = { channel: 'chat', chat: '1' };
const patch = 'diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-old\n+new\n';
const file = { name: 'worker.patch', contentType: 'text/x-diff', content: patch };

describe('DurableOutbox: a message with a file', () => {
  let dir: { path: string; remove: () => void };
  let store: TestStore;
  let clock: ManualClock;
  let outbox: DurableOutbox;

  function build(connector: Connector): DurableOutbox {
    const built = createOutbox({
      db: store.db,
      clock,
      logger: silentLogger(),
      config: outboxSchema.parse({}),
      random: () => 0,
    });
    built.register(connector);
    return built;
  }

  /** Closes the database and opens it again, as a restarted daemon does. */
  async function restart(connector: Connector): Promise<void> {
    await outbox.stop();
    await store.close();
    store = await openTestStore(join(dir.path, 'state.db'));
    outbox = build(connector);
  }

  beforeEach(async () => {
    dir = tempDir('sb-outbox-file-');
    store = await openTestStore(join(dir.path, 'state.db'));
    clock = new ManualClock();
  });

  afterEach(async () => {
    await outbox.stop();
    await store.close();
    dir.remove();
  });

  it('is stored with the row and delivered by a new outbox after a restart, the file on the last part only', async () => {
    outbox = build(new FileConnector(true));
    await outbox.send(chat, { text: 'first part. second part.', file, replyTo: '1:7' }, { key: 'diff-1' });
    const connector = new FileConnector(true, 12);
    await restart(connector);
    await outbox.start();
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.map((d) => [d.message.text, d.message.file, d.message.replyTo, d.key]),
      [
        ['first part.', undefined, '1:7', 'outbox-1-0'],
        ['second part.', file, undefined, 'outbox-1-1'],
      ],
    );
  });

  it('sends the file as a part of its own after a text longer than the connector lets go with a file', async () => {
    const connector = new FileConnector(true, 1000, 10);
    outbox = build(connector);
    await outbox.start();
    await outbox.send(chat, { text: 'a longer stat summary', file, replyTo: '1:7' });
    await outbox.send(chat, { text: 'short', file });
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.map((d) => [d.message.text, d.message.file?.name, d.message.replyTo, d.key]),
      [
        ['a longer stat summary', undefined, '1:7', 'outbox-1-0'],
        ['', 'worker.patch', undefined, 'outbox-1-1'],
        ['short', 'worker.patch', undefined, 'outbox-2-0'],
      ],
    );
  });

  it('falls back to the text and the content inline (split as any text) on a connector without files', async () => {
    const connector = new FileConnector(false, 60);
    outbox = build(connector);
    await outbox.start();
    await outbox.send(chat, { text: 'worker: 1 file changed', file });
    await outbox.idle();
    assert.ok(
      connector.delivered.every((d) => d.message.file === undefined),
      'no file reaches it',
    );
    const text = connector.delivered.map((d) => d.message.text).join('\n');
    assert.match(text, /^worker: 1 file changed$/m);
    assert.match(text, /^```diff$/m);
    assert.match(text, /^\+new$/m);
  });

  it("sends the sender's own inline form where files cannot go", async () => {
    const connector = new FileConnector(false);
    outbox = build(connector);
    await outbox.start();
    await outbox.send(chat, { text: 'stat', file: { ...file, inline: 'stat and the patch, as the command shows it' } });
    await outbox.idle();
    assert.deepEqual(
      connector.delivered.map((d) => d.message.text),
      ['stat and the patch, as the command shows it'],
    );
  });

  it('after a crash mid-send, an idempotent connector gets the file again under the same delivery key', async () => {
    const hanging = new FileConnector(true);
    hanging.hangNext = true;
    outbox = build(hanging);
    await outbox.start();
    await outbox.send(chat, { text: 'stat', file });
    await waitFor('the send to begin', () => !hanging.hangNext);
    const again = new FileConnector(true);
    again.idempotent = true;
    await restart(again);
    await outbox.start();
    await outbox.idle();
    assert.deepEqual(
      again.delivered.map((d) => [d.message.file?.content, d.key]),
      [[patch, 'outbox-1-0']],
    );
  });

  it('is never delivered as an edit: a file cannot be added to a message that went out', async () => {
    const connector = new FileConnector(true);
    outbox = build(connector);
    await outbox.start();
    await outbox.send(chat, { text: 'working…' }, { key: 'status' });
    await outbox.idle();
    await outbox.send(chat, { text: 'done', file, replaces: 'status' }, { key: 'status-2' });
    await outbox.idle();
    assert.deepEqual(connector.edits, []);
    assert.deepEqual(
      connector.delivered.map((d) => [d.message.text, d.message.file?.name]),
      [
        ['working…', undefined],
        ['done', 'worker.patch'],
      ],
    );
  });

  it('refuses a malformed file and cuts content over the limit with a line saying so', async () => {
    const connector = new FileConnector(true);
    outbox = build(connector);
    await outbox.start();
    await assert.rejects(outbox.send(chat, { text: 't', file: { ...file, name: '../etc/passwd' } }), /file/);
    await assert.rejects(outbox.send(chat, { text: 't', file: { ...file, contentType: 'diff' } }), /file/);
    await assert.rejects(outbox.send(chat, { text: 't', file: { ...file, content: '' } }), /file/);
    const line = `${'x'.repeat(1023)}\n`;
    await outbox.send(chat, { text: 'big', file: { ...file, content: line.repeat(MAX_FILE_BYTES / 1024 + 10) } });
    await outbox.idle();
    const sent = connector.delivered[0]?.message.file?.content ?? '';
    assert.ok(Buffer.byteLength(sent) <= MAX_FILE_BYTES, `${Buffer.byteLength(sent)} bytes`);
    assert.match(sent, /\n\[cut by switchboard: the file has \d+ bytes, more than the 8388608 a message carries\]\n$/);
    assert.ok(sent.startsWith(line.repeat(100)), 'cut at a line');
  });
});

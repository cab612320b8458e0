import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { TelegramOutboxRig } from '../../../test/support/telegram-outbox-rig.ts';
import { telegramOutboxRig } from '../../../test/support/telegram-outbox-rig.ts';
import type { ChannelTarget } from '../connector.ts';

const OWNER = 111;
const patch = 'diff --git a/a_b.ts b/a_b.ts\n--- a/a_b.ts\n+++ b/a_b.ts\n@@ -1 +1 @@\n-old *x*\n+new `y` é\n';
const file = { name: 'worker.patch', contentType: 'text/x-diff', content: patch };
const topic: ChannelTarget = { channel: 'telegram', chat: '-100123', thread: '42' };

describe('Telegram connector: files as documents', () => {
  let rig: TelegramOutboxRig;

  beforeEach(async () => {
    rig = await telegramOutboxRig('sb-tg-files-', OWNER);
  });

  afterEach(async () => {
    await rig.close();
  });

  it('sends a file as a document (multipart) with the text as its caption, in the topic of the target', async () => {
    await rig.outbox.send(topic, { text: 'worker: 1 file changed, +1 -1', file });
    const [sent] = await rig.fake.waitForSent(1);
    assert.equal(rig.fake.calls('sendDocument').length, 1);
    assert.equal(rig.fake.calls('sendMessage').length, 0, 'one message: the document with its caption');
    assert.equal(sent?.document?.fileName, 'worker.patch');
    assert.equal(sent?.document?.content, patch, 'the bytes as sent');
    assert.equal(sent?.text, 'worker: 1 file changed, +1 -1');
    assert.equal(sent?.chatId, '-100123');
    assert.equal(sent?.threadId, 42);
  });

  it('sends a text too long for a caption as a message first, then the document (a part of its own) in the topic', async () => {
    const text = `worker: 40 files changed\n${'M +1 -1 src/some/file/in/the/tree.ts\n'.repeat(40)}`;
    assert.ok(text.length > 1024 && text.length < 4096);
    // The document is refused once: only it is sent again, not the text before it.
    rig.fake.fail('sendDocument', { status: 429, retryAfter: 2 });
    await rig.outbox.send(topic, { text, file });
    await rig.fake.waitFor(() => rig.fake.calls('sendDocument').length === 1, 'the refused upload');
    await rig.outbox.idle();
    rig.clock.advance(2_000);
    const sent = await rig.fake.waitForSent(2);
    await rig.outbox.idle();
    assert.equal(rig.fake.calls('sendMessage').length, 1, 'the text went out once');
    assert.deepEqual(
      sent.map((m) => [m.document?.fileName, m.threadId]),
      [
        [undefined, 42],
        ['worker.patch', 42],
      ],
    );
    assert.equal(sent[0]?.text, text);
    assert.equal(sent[1]?.text, '', 'no caption');
    assert.equal(sent[1]?.document?.content, patch);
  });

  it('retries a document Telegram rate-limited, after its retry_after, and sends it once', async () => {
    rig.fake.fail('sendDocument', { status: 429, retryAfter: 3 });
    await rig.outbox.send({ channel: 'telegram', chat: String(OWNER) }, { text: 'stat', file });
    await rig.fake.waitFor(() => rig.fake.calls('sendDocument').length === 1, 'the refused upload');
    await rig.outbox.idle();
    assert.equal(rig.fake.sent.length, 0);
    rig.clock.advance(3_000);
    const [sent] = await rig.fake.waitForSent(1);
    assert.equal(sent?.document?.content, patch);
    await rig.outbox.idle();
    assert.equal(rig.fake.sent.length, 1);
  });

  it('dead-letters a document Telegram refuses for good', async () => {
    rig.fake.fail('sendDocument', { status: 400, description: 'Bad Request: chat not found' });
    await rig.outbox.send({ channel: 'telegram', chat: '999' }, { text: 'stat', file });
    await rig.fake.waitFor(() => rig.fake.calls('sendDocument').length === 1, 'the refused upload');
    await rig.outbox.idle();
    const [dead] = await rig.outbox.deadLetters();
    assert.match(dead?.error ?? '', /chat not found/);
  });
});

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../../test/support/databases.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { testNotices } from '../../../test/support/test-notices.ts';
import { ManualClock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config-load.ts';
import { silentLogger } from '../../core/logger.ts';
import type { WebMessage } from '../../store/web-transcript.ts';
import { WEB_CHANGES_CHANNEL } from '../../store/web-transcript.ts';
import { WebConnector } from './web-connector.ts';

const CHAT = 'chat-bbbb2222';
const POLL_MS = 2000;

describeEachDatabase('web chats shared across nodes', (fresh) => {
  it("shows on a node's open page the replies another node wrote, each once and in version order", async () => {
    const { db, dialect } = await fresh();
    const dir = tempDir();
    const clock = new ManualClock();
    const { config } = loadConfig({ home: dir.path, env: {}, overrides: {} });
    const build = (): WebConnector =>
      new WebConnector({ db, config: config.channels.web, clock, logger: silentLogger() });
    // Node A holds `primary` (its outbox writes the replies); node B serves the page.
    const holder = build();
    const page = build();
    const notices = testNotices(WEB_CHANGES_CHANNEL);
    holder.share(testNotices(WEB_CHANGES_CHANNEL), { pollMs: POLL_MS, notify: dialect === 'postgres' });
    page.share(notices, { pollMs: POLL_MS, notify: dialect === 'postgres' });
    const received: string[] = [];
    await holder.start(async (m) => {
      received.push(m.text);
    });
    await page.start(async (m) => {
      received.push(m.text);
    });
    const seen: WebMessage[] = [];
    const feed = await page.follow(CHAT, null, { onMessage: (m) => seen.push(m), onClose: () => undefined });
    try {
      assert.deepEqual(feed.history, []);
      // The page's own message: pending, then accepted, handed over in order.
      await page.accept(CHAT, { id: 'msg-00000001', text: 'hello' });
      await page.idle();
      assert.deepEqual(
        seen.map((m) => [m.text, m.status]),
        [
          ['hello', 'pending'],
          ['hello', 'accepted'],
        ],
      );
      assert.deepEqual(received, ['hello']);
      // A reply written on the holder reaches the page on the notice.
      await holder.send({ channel: 'web', chat: CHAT }, { text: 'first reply' });
      notices.notify(CHAT);
      await page.idle();
      assert.equal(seen.at(-1)?.text, 'first reply');
      // Without a notice (lost), the poll finds the next one; a reconnect finds the one after.
      await holder.send({ channel: 'web', chat: CHAT }, { text: 'second reply' });
      clock.advance(POLL_MS);
      await page.idle();
      assert.equal(seen.at(-1)?.text, 'second reply');
      const sent = await holder.send({ channel: 'web', chat: CHAT }, { text: 'third reply' });
      await holder.edit({ channel: 'web', chat: CHAT }, sent.ref, { text: 'third reply, edited' });
      notices.reconnect();
      notices.notify(CHAT);
      await page.idle();
      assert.deepEqual(
        seen.map((m) => m.text),
        ['hello', 'hello', 'first reply', 'second reply', 'third reply, edited'],
        'each change once (the edit folded into its latest version)',
      );
      const versions = seen.map((m) => m.version);
      assert.deepEqual(
        versions,
        [...versions].sort((a, b) => a - b),
      );
      // A chat no page follows is not read.
      feed.close();
      await holder.send({ channel: 'web', chat: CHAT }, { text: 'nobody watching' });
      notices.notify(CHAT);
      await page.idle();
      assert.equal(seen.at(-1)?.text, 'third reply, edited');
    } finally {
      feed.close();
      await page.stop();
      await holder.stop();
      dir.remove();
    }
  });
});

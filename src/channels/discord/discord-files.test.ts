// Files through the Discord connector against the fake Discord: a message's file is attached in the same message (a
// multipart upload: payload_json and files[0]), in the thread the target names, in the filled response of a slash
// command; the nonce still makes a resend return the first message, and a 429 is rate_limited.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import type { FakeDiscord } from '../../../test/support/fake-discord.ts';
import { startFakeDiscord } from '../../../test/support/fake-discord.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import { systemClock } from '../../core/clock.ts';
import { discordChannelSchema } from '../../core/config-discord.ts';
import type { InboundMessage } from '../connector.ts';
import { DeliveryError } from '../delivery-error.ts';
import type { DiscordConnector } from './discord-connector.ts';
import { createDiscordConnectors } from './discord-connectors.ts';

const OWNER = '400000000000000001';
const patch = 'diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-old @everyone\n+new é\n';
const file = { name: 'worker.patch', contentType: 'text/x-diff', content: patch };

describe('Discord connector: files as attachments', () => {
  let fake: FakeDiscord;
  let connector: DiscordConnector;
  const received: InboundMessage[] = [];

  before(async () => {
    fake = await startFakeDiscord();
    const section = discordChannelSchema.parse({
      enabled: true,
      token: fake.token,
      applicationId: fake.applicationId,
      guildIds: [fake.guildId],
      allowedUserIds: [OWNER],
      apiUrl: fake.url,
    });
    const commands = [{ name: 'claude_diff', description: 'A session’s changes', usage: '/claude_diff <session>' }];
    [connector] = createDiscordConnectors(section, {
      clock: systemClock(),
      logger: captureLogger().logger,
      commands,
    }) as [DiscordConnector];
    await connector.start(async (message) => {
      received.push(message);
    });
  });

  afterEach(() => {
    received.length = 0;
  });

  after(async () => {
    await connector?.stop();
    await fake?.close();
  });

  it('attaches the file to the message, in the thread the target names', async () => {
    assert.equal(connector.files, true);
    const target = { channel: 'discord', chat: fake.channelId };
    const sent = await connector.send(target, { text: 'worker: 1 file changed', file });
    const message = fake.messages.get(sent.ref);
    assert.equal(message?.content, 'worker: 1 file changed');
    assert.deepEqual(
      message?.attachments?.map((a) => [a.filename, a.content]),
      [['worker.patch', patch]],
    );
    const threaded = await connector.send({ ...target, thread: sent.ref }, { text: 'again', file });
    const [threadId, id] = threaded.ref.split(':');
    assert.equal(threadId, sent.ref, 'in the thread started from the message');
    assert.equal(fake.messages.get(id ?? '')?.attachments?.[0]?.content, patch);
  });

  it('fills the response of a slash command with the text and the file', async () => {
    const command = fake.slash({ userId: OWNER, channelId: fake.channelId, name: 'claude_diff', args: 'worker' });
    await waitFor('the command', () => received.length > 0);
    await waitFor('the deferral', () => command.callbacks.length > 0);
    const sent = await connector.send(received[0]?.target as InboundMessage['target'], {
      text: 'worker: 1 file changed',
      replyTo: received[0]?.id,
      file,
    });
    assert.equal(sent.ref, command.originalId);
    assert.equal(fake.messages.get(sent.ref)?.attachments?.[0]?.filename, 'worker.patch');
    assert.equal(fake.messages.get(sent.ref)?.attachments?.[0]?.content, patch);
  });

  it('resends once per delivery key (the nonce) and reports a 429 of an upload as rate_limited', async () => {
    const target = { channel: 'discord', chat: fake.channelId };
    const before = fake.sent.length;
    const once = await connector.send(target, { text: 'stat', file }, { key: 'outbox-9-0' });
    const twice = await connector.send(target, { text: 'stat', file }, { key: 'outbox-9-0' });
    assert.equal(twice.ref, once.ref);
    assert.equal(fake.sent.length, before + 1);
    fake.failNext({ method: 'POST', path: /^\/channels\/\d+\/messages$/, status: 429, retryAfter: 3 });
    await assert.rejects(
      connector.send(target, { text: 'stat', file }),
      (e) => e instanceof DeliveryError && e.kind === 'rate_limited' && (e.retryAfterMs ?? 0) >= 3000,
    );
  });
});

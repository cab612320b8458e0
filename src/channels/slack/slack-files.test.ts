// Files through the Slack connector against the fake Slack: the external upload flow (files.getUploadURLExternal, the
// upload POST, files.completeUploadExternal) shares the file's bytes under its name, in the target's thread, with the
// text as its comment; rate limits and refusals become DeliveryErrors.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import type { FakeSlack } from '../../../test/support/fake-slack.ts';
import { startFakeSlack } from '../../../test/support/fake-slack.ts';
import { systemClock } from '../../core/clock.ts';
import { slackChannelSchema } from '../../core/config-slack.ts';
import { DeliveryError } from '../delivery-error.ts';
import type { SlackConnector } from './slack-connectors.ts';
import { createSlackConnectors } from './slack-connectors.ts';

const patch = 'diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-old <x> & y\n+new é\n';
const file = { name: 'worker.patch', contentType: 'text/x-diff', content: patch };

describe('Slack connector: files through files.uploadV2', () => {
  let fake: FakeSlack;
  let slack: SlackConnector;

  beforeEach(async () => {
    fake = await startFakeSlack();
    const config = slackChannelSchema.parse({
      enabled: true,
      botToken: fake.botToken,
      appToken: fake.appToken,
      apiUrl: fake.apiUrl,
      allowedUserIds: ['UOWNER'],
    });
    const [made] = createSlackConnectors(config, { clock: systemClock(), logger: captureLogger().logger, env: {} });
    assert.ok(made);
    slack = made;
  });

  afterEach(async () => {
    await slack.stop();
    await fake.close();
  });

  it('uploads the bytes and shares them under the file name, in the thread, with the text as the comment', async () => {
    assert.equal(slack.files, true);
    await slack.send(
      { channel: 'slack', chat: 'CTEAM', thread: '1700000001.000001' },
      { text: 'worker: 1 file changed <+1 -1>', file },
    );
    assert.deepEqual(
      fake.calls.map((c) => c.method),
      ['files.getUploadURLExternal', 'files.completeUploadExternal'],
    );
    assert.equal(fake.files.uploads.length, 1, 'the bytes went to the upload URL');
    const [shared] = fake.files.shared;
    assert.equal(shared?.name, 'worker.patch');
    assert.equal(shared?.content, patch);
    assert.equal(shared?.channel, 'CTEAM');
    assert.equal(shared?.threadTs, '1700000001.000001');
    assert.equal(shared?.initialComment, 'worker: 1 file changed &lt;+1 -1&gt;');
    assert.equal(fake.posts.length, 0, 'one message: the file with its comment');
  });

  it('posts a message with buttons first and the file after it, without a comment', async () => {
    const sent = await slack.send(
      { channel: 'slack', chat: 'DOWNER' },
      { text: 'stat', file, buttons: [[{ label: 'PR', command: '/claude_pr worker' }]] },
    );
    assert.equal(sent?.ref, fake.posts[0]?.ts);
    assert.equal(fake.posts[0]?.buttons[0]?.[0]?.label, 'PR');
    assert.equal(fake.files.shared[0]?.initialComment, undefined);
    assert.equal(fake.files.shared[0]?.content, patch);
  });

  it('turns a 429 of the upload flow into rate_limited with the Retry-After, and a refusal into permanent', async () => {
    fake.rateLimit('files.getUploadURLExternal', 7);
    await assert.rejects(
      slack.send({ channel: 'slack', chat: 'CTEAM' }, { text: 'stat', file }),
      (e) => e instanceof DeliveryError && e.kind === 'rate_limited' && e.retryAfterMs === 7000,
    );
    fake.rateLimit('files.completeUploadExternal', 2);
    await assert.rejects(
      slack.send({ channel: 'slack', chat: 'CTEAM' }, { text: 'stat', file }),
      (e) => e instanceof DeliveryError && e.kind === 'rate_limited' && e.retryAfterMs === 2000,
    );
    assert.equal(fake.files.shared.length, 0);
    fake.refuse('files.getUploadURLExternal', 'missing_scope');
    await assert.rejects(
      slack.send({ channel: 'slack', chat: 'CTEAM' }, { text: 'stat', file }),
      (e) => e instanceof DeliveryError && e.kind === 'permanent' && /files:write/.test(e.message),
    );
    await assert.rejects(
      slack.send({ channel: 'slack', chat: '' }, { text: 'stat', file }),
      (e) => e instanceof DeliveryError && e.kind === 'permanent',
    );
  });
});

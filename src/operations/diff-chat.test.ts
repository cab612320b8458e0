// `/claude_diff` typed in a chat, end to end through the real connector, the inbound handler and the durable outbox
// (over the test's database: SQLite, or PostgreSQL with TEST_DATABASE=postgres): on Telegram (the fake Bot API), Discord
// (the fake Discord) and Slack (the fake Slack) the answer is the stat summary with `<session>.patch` attached, whose
// content is the session's patch; on a chat without files it is the inline form.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { captureLogger } from '../../test/support/capture-logger.ts';
import { startFakeDiscord } from '../../test/support/fake-discord.ts';
import { startFakeSlack } from '../../test/support/fake-slack.ts';
import { commitFile, initRepo } from '../../test/support/git-repo.ts';
import { managerPerTestOn } from '../../test/support/manager-on-store.ts';
import { RecordingEngine } from '../../test/support/recording-engine.ts';
import type { TelegramOutboxRig } from '../../test/support/telegram-outbox-rig.ts';
import { telegramOutboxRig } from '../../test/support/telegram-outbox-rig.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import type { InboundHandler, Outbox } from '../channels/connector.ts';
import { createDiscordConnectors } from '../channels/discord/discord-connectors.ts';
import { createOutbox } from '../channels/outbox.ts';
import { createSlackConnectors } from '../channels/slack/slack-connectors.ts';
import { systemClock } from '../core/clock.ts';
import { outboxSchema } from '../core/config-channels.ts';
import { discordChannelSchema } from '../core/config-discord.ts';
import { slackChannelSchema } from '../core/config-slack.ts';
import { silentLogger } from '../core/logger.ts';
import { createInboundHandler } from './inbound.ts';
import type { OperationServices } from './operation.ts';
import { OPERATIONS } from './table.ts';

const OWNER = 111;
const DISCORD_OWNER = '400000000000000001';
const SLACK_OWNER = 'UOWNER';

describe('/claude_diff in a chat that takes files', () => {
  const { f } = managerPerTestOn((path) => openTestStore(path));
  let services: OperationServices;
  let repo: string;
  /** The session's patch as git shows it (the working tree against the commit the session started from). */
  let expected: string;

  beforeEach(async () => {
    services = { config: f.config, sessions: f.manager, clock: f.clock };
    repo = initRepo(join(f.workdir, 'repo'));
    await f.manager.launch({ prompt: 'p', name: 'worker', workdir: repo, originChannel: 'cli' });
    commitFile(repo, 'lib.ts', 'export const one = 1;\n');
    writeFileSync(join(repo, 'notes.md'), 'A *repo* with `code` and_underscores\n');
    execFileSync('git', ['add', 'notes.md'], { cwd: repo });
    expected = execFileSync('git', ['diff', 'HEAD~1', '--cached'], { cwd: repo, encoding: 'utf8' });
  });

  function handler(outbox: Outbox): InboundHandler {
    return createInboundHandler({
      ops: OPERATIONS,
      services,
      engine: new RecordingEngine(),
      outbox,
      logger: silentLogger(),
    });
  }

  describe('Telegram', () => {
    let rig: TelegramOutboxRig;
    beforeEach(async () => {
      rig = await telegramOutboxRig('sb-diff-tg-', OWNER, (path) => openTestStore(path));
    });
    afterEach(async () => {
      await rig.close();
    });

    it('answers the stat summary as the caption of worker.patch, whose content is the patch', async () => {
      await rig.bot.start(handler(rig.outbox));
      const { messageId } = rig.fake.pushMessage({ fromId: OWNER, text: '/claude_diff worker' });
      const [sent] = await rig.fake.waitForSent(1);
      assert.equal(sent?.document?.fileName, 'worker.patch');
      assert.match(sent?.text ?? '', /^worker: 2 files changed, \+2 -0 since [0-9a-f]{12}$/m);
      assert.doesNotMatch(sent?.text ?? '', /diff --git/);
      assert.equal(sent?.replyToMessageId, messageId);
      const content = sent?.document?.content ?? '';
      assert.match(content, /^diff --git a\/notes\.md b\/notes\.md$/m);
      assert.match(content, /^\+A \*repo\* with `code` and_underscores$/m);
      assert.match(content, /^\+export const one = 1;$/m);
      assert.equal(content, expected, 'the whole patch, as git shows it');
    });
  });

  it('Discord: answers the stat summary with worker.patch attached', async () => {
    const fake = await startFakeDiscord();
    const section = discordChannelSchema.parse({
      enabled: true,
      token: fake.token,
      applicationId: fake.applicationId,
      guildIds: [fake.guildId],
      allowedUserIds: [DISCORD_OWNER],
      apiUrl: fake.url,
    });
    const [discord] = createDiscordConnectors(section, { clock: systemClock(), logger: captureLogger().logger });
    assert.ok(discord);
    const outbox = createOutbox({
      db: f.db,
      clock: f.clock,
      logger: silentLogger(),
      config: outboxSchema.parse({}),
    });
    outbox.register(discord);
    await outbox.start();
    try {
      await discord.start(handler(outbox));
      const asked = fake.userMessage({ userId: DISCORD_OWNER, content: '/claude_diff worker' });
      const answer = await waitFor('the answer with its file', () =>
        fake.sent.find((m) => m.channelId === asked.channelId && m.attachments),
      );
      assert.match(answer?.content ?? '', /^worker: 2 files changed/m);
      assert.equal(answer?.attachments?.[0]?.filename, 'worker.patch');
      assert.equal(answer?.attachments?.[0]?.content, expected);
      assert.match(answer?.attachments?.[0]?.content ?? '', /^\+export const one = 1;$/m);
    } finally {
      await outbox.stop();
      await discord.stop();
      await fake.close();
    }
  });

  it('Slack: shares worker.patch in the thread of the command, with the stat summary as its comment', async () => {
    const fake = await startFakeSlack();
    const section = slackChannelSchema.parse({
      enabled: true,
      botToken: fake.botToken,
      appToken: fake.appToken,
      apiUrl: fake.apiUrl,
      allowedUserIds: [SLACK_OWNER],
    });
    const [slack] = createSlackConnectors(section, { clock: systemClock(), logger: captureLogger().logger, env: {} });
    assert.ok(slack);
    const outbox = createOutbox({
      db: f.db,
      clock: f.clock,
      logger: silentLogger(),
      config: outboxSchema.parse({}),
    });
    outbox.register(slack);
    await outbox.start();
    try {
      await slack.start(handler(outbox));
      await waitFor('the Socket Mode connection', () => fake.socket.opened > 0);
      const asked = fake.pushMention({
        user: SLACK_OWNER,
        channel: 'CTEAM',
        threadTs: '1700000000.000001',
        text: '/claude_diff worker',
      });
      const shared = await waitFor('the shared file', () => fake.files.shared[0]);
      assert.equal(shared.name, 'worker.patch');
      assert.equal(shared.content, expected);
      assert.equal(shared.channel, asked.channel);
      assert.equal(shared.threadTs, '1700000000.000001');
      assert.match(shared.initialComment ?? '', /^worker: 2 files changed/m);
    } finally {
      await outbox.stop();
      await slack.stop();
      await fake.close();
    }
  });
});

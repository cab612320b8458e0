// Two Telegram bots on one daemon (`channels.telegram.accounts`): each bot's chats are answered through that bot, a
// `telegram|<account>|<chat>` target reaches the right one, and a stranger is told which account's allow-list to join.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Daemon } from '../../src/main.ts';
import { startDaemon } from '../../src/main.ts';
import { textsTo } from '../support/e2e-daemon.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const ALICE = 1001;
const BOB = 2002;

describe('several Telegram bots on one daemon', { timeout: 60_000 }, () => {
  const dir = tempDir('sb-e2e-tg-accounts-');
  let work: FakeTelegram;
  let home: FakeTelegram;
  let daemon: Daemon;

  before(async () => {
    work = await startFakeTelegram();
    home = await startFakeTelegram();
    const bot = (fake: FakeTelegram, allowedUserIds: number[]) => ({
      botToken: fake.token,
      apiRoot: fake.url,
      allowedUserIds,
      pollTimeoutSeconds: 1,
      retryBaseDelayMs: 50,
      retryMaxDelayMs: 200,
    });
    daemon = await startDaemon({
      home: dir.path,
      env: {},
      overrides: {
        'gateway.port': 0,
        'log.level': 'silent',
        workspaces: [dir.path],
        'harnesses.claude.executable': FAKE_CLAUDE,
        'channels.telegram': {
          enabled: true,
          format: 'plain',
          accounts: { work: bot(work, [ALICE]), home: bot(home, [BOB]) },
        },
      },
    });
  });

  after(async () => {
    await daemon?.stop();
    await work?.close();
    await home?.close();
    dir.remove();
  });

  it("answers each bot's chats through that bot", async () => {
    work.pushMessage({ fromId: ALICE, text: '/claude_sessions' });
    home.pushMessage({ fromId: BOB, text: '/claude_stats' });
    await waitFor('both answers', () => textsTo(work, ALICE).length > 0 && textsTo(home, BOB).length > 0);
    assert.match(textsTo(work, ALICE).join('\n'), /session/i);
    assert.equal(textsTo(home, ALICE).length, 0, 'nothing for Alice through the other bot');
    assert.equal(textsTo(work, BOB).length, 0, 'nothing for Bob through the other bot');
  });

  it("refuses a stranger, naming that bot's allow-list", async () => {
    home.pushMessage({ fromId: ALICE, text: 'hello' });
    const refusal = await waitFor('the refusal', () => textsTo(home, ALICE).at(0));
    assert.match(refusal, /channels\.telegram\.accounts\.home\.allowedUserIds/);
  });

  it('a session reporting to telegram|<account>|<chat> is announced through that bot', async () => {
    await daemon.services.sessions.launch({
      prompt: 'say hi',
      name: 'homework',
      workdir: dir.path,
      originChannel: `telegram|home|${BOB}`,
    });
    await waitFor('the launch line', () => textsTo(home, BOB).some((t) => t.startsWith('↩️ [homework] Launched')));
    assert.equal(textsTo(work, BOB).length, 0);
  });
});

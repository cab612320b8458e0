// Crash tests of the durable outbox on the real daemon: the process kills itself right after a connector send and
// before the row is settled (fault point `outbox.after-send`). The web chat is delivered exactly once (its transcript
// keeps the delivery key); Telegram, which has no idempotency key, at least once: a message claimed but not sent goes
// out once after the restart, one the crash caught after its send goes out again (the only window left for a repeat).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RIG_USER, withCrashRig } from '../support/crash-rig.ts';
import { textsTo } from '../support/e2e-daemon.ts';
import { chatText, lastUserText } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;
const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const WEB_CHAT = 'crashchat01';

/** Reads rows from the daemon's database (opened read-only next to the running daemon). */
function query<T>(home: string, sql: string, ...params: (string | number)[]): T[] {
  const db = new DatabaseSync(join(home, 'state.db'), { readOnly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

describe('SIGKILL of the daemon between a connector send and the outbox settling it', { concurrency: true }, () => {
  it('web: the message lands in the transcript once, though the outbox sends it again after the restart', async () => {
    await withCrashRig(
      'sb-crash-outbox-web-',
      () => chatText('unused'),
      { channels: { web: { enabled: true } } },
      async (rig) => {
        const workdir = join(rig.root, 'work');
        mkdirSync(workdir, { recursive: true });
        rig.configure({ harnesses: { claude: { executable: FAKE_CLAUDE } } });
        await rig.start({ SWITCHBOARD_FAULT: 'outbox.after-send' });
        // The launch notice goes to the session's origin, the web chat: its send is the first one, and the kill follows it.
        await rig.daemon.rpc('sessions.launch', {
          prompt: '[[hang]] fix the build',
          name: 'web-fix',
          workdir,
          channel: `web|${WEB_CHAT}`,
        });
        await rig.crashed('outbox.after-send');
        const launched = (): { text: string }[] =>
          query<{ text: string }>(
            rig.home,
            `SELECT text FROM web_messages WHERE chat_id = ? AND role = 'agent' AND text LIKE '%Launched%'`,
            WEB_CHAT,
          );
        assert.equal(launched().length, 1, 'the launch notice reached the transcript before the kill');

        await rig.start();
        await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
        assert.ok(
          rig.daemon.output().includes('sending it again under the same delivery key'),
          'the interrupted send was retried',
        );
        assert.equal(launched().length, 1, 'the retried send added nothing to the transcript');
        assert.equal((await rig.health()).outbox.pending, 0);
        await rig.stop();
      },
    );
  });

  it('telegram, killed after the claim and before the send: the reply is sent once after the restart', async () => {
    await withCrashRig(
      'sb-crash-outbox-tgc-',
      (body) => chatText(`answer to: ${lastUserText(body)}`),
      {},
      async (rig) => {
        const { telegram } = rig;
        await rig.start({ SWITCHBOARD_FAULT: 'outbox.after-claim' });
        telegram.pushMessage({ fromId: RIG_USER, text: 'hello' });
        await rig.crashed('outbox.after-claim');
        assert.deepEqual(textsTo(telegram, RIG_USER), [], 'nothing went out before the kill');
        const [claimed] = query<{ status: string }>(rig.home, 'SELECT status FROM outbox_messages');
        assert.equal(claimed?.status, 'sending', 'the row was claimed before the send');

        await rig.start();
        await waitFor('the reply', () => textsTo(telegram, RIG_USER).includes('answer to: hello'), LONG);
        await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
        assert.deepEqual(textsTo(telegram, RIG_USER), ['answer to: hello']);
        await rig.stop();
      },
    );
  });

  it('telegram, killed after the send and before it was settled: found claimed, sent again (at least once), then settled', async () => {
    await withCrashRig(
      'sb-crash-outbox-tg-',
      (body) => chatText(`answer to: ${lastUserText(body)}`),
      {},
      async (rig) => {
        const { telegram } = rig;
        await rig.start({ SWITCHBOARD_FAULT: 'outbox.after-send' });
        telegram.pushMessage({ fromId: RIG_USER, text: 'hello' });
        await rig.crashed('outbox.after-send');
        assert.deepEqual(textsTo(telegram, RIG_USER), ['answer to: hello'], 'the reply went out before the kill');
        const [claimed] = query<{ status: string }>(rig.home, 'SELECT status FROM outbox_messages');
        assert.equal(claimed?.status, 'sending', 'the send is on record as in flight');

        await rig.start();
        await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
        // Telegram has no idempotency key: the daemon cannot know the send went out, and chooses a repeat over a loss.
        assert.deepEqual(textsTo(telegram, RIG_USER), ['answer to: hello', 'answer to: hello']);
        assert.ok(
          rig.daemon.output().includes('interrupted mid-send by a crash; sending it again'),
          'the repeat is logged',
        );
        const rows = query<{ status: string }>(rig.home, 'SELECT status FROM outbox_messages').map((r) => r.status);
        assert.deepEqual(rows, ['sent'], 'settled (kept as sent while its idempotency key dedupes)');
        telegram.pushMessage({ fromId: RIG_USER, text: 'again' });
        await waitFor('the next answer', () => textsTo(telegram, RIG_USER).includes('answer to: again'), LONG);
        await rig.stop();
      },
    );
  });
});

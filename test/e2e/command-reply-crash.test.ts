// Crash test of a chat command on the real daemon: killed after its reply was queued and before the command was
// recorded as finished (fault `inbound.command.before-finish`). Telegram delivers the command again after the restart;
// it is not run again, and the person gets its reply once — not the reply and a "cut off" notice as well.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RIG_USER, withCrashRig } from '../support/crash-rig.ts';
import { textsTo } from '../support/e2e-daemon.ts';
import { chatText } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;

describe("SIGKILL of the daemon between a chat command's reply and its finish record", () => {
  it('the command is answered once', async () => {
    await withCrashRig(
      'sb-crash-command-',
      () => chatText('unused'),
      {},
      async (rig) => {
        const { telegram } = rig;
        await rig.start({ SWITCHBOARD_FAULT: 'inbound.command.before-finish' });
        const command = telegram.pushMessage({ fromId: RIG_USER, text: '/claude_sessions' });
        await rig.crashed('inbound.command.before-finish');

        await rig.start();
        await telegram.waitFor(
          () => telegram.confirmedUpTo >= command.updateId,
          'the redelivered command to be confirmed',
          LONG,
        );
        await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
        const chat = textsTo(telegram, RIG_USER);
        assert.equal(chat.length, 1, `one answer: ${JSON.stringify(chat)}`);
        assert.ok(
          !chat[0]?.includes('The daemon restarted while it was running'),
          'the reply, not the "cut off" notice',
        );
        assert.ok(
          rig.daemon.output().includes('chat command delivered again after a crash cut it off'),
          'the command came again and was not run',
        );
        await rig.stop();
      },
    );
  });
});

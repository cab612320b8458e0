// Crash test of the coding-session restore on the real daemon: a session cut off by a SIGKILL is marked interrupted on
// the next start; that start is killed right after the mark (fault `sessions.restore.after-mark`), the one after it
// right after the chat notice was stored and before the orchestrator wake (`sessions.restore.after-notice`), the third
// after both were stored and before the notice was cleared (`sessions.restore.before-clear`). The fourth start still
// announces the session: the chat hears of it once and the orchestrator is woken once.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RIG_USER, withCrashRig } from '../support/crash-rig.ts';
import { systemText, textsTo } from '../support/e2e-daemon.ts';
import type { ChatBody } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;
const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

function isUserTurn(body: ChatBody): boolean {
  return systemText(body).includes(`serves the chat telegram|${RIG_USER}`);
}

describe('SIGKILL of the daemon inside the restore of interrupted coding sessions', () => {
  it('killed after the mark, after the chat notice, before the clear: the next start announces once to the chat and wakes the orchestrator once', async () => {
    const handler = (body: ChatBody) => {
      const text = lastUserText(body);
      const interrupted = /Coding session "(\S+)" \[[^\]]+\] was interrupted/.exec(text);
      return chatText(interrupted ? `noted: ${interrupted[1]} was interrupted` : `answer to: ${text}`);
    };
    await withCrashRig('sb-crash-restore-', handler, {}, async (rig) => {
      const { telegram } = rig;
      const workdir = join(rig.root, 'work');
      mkdirSync(workdir, { recursive: true });
      rig.configure({ harnesses: { claude: { executable: FAKE_CLAUDE } } });
      await rig.start();
      const chat = (): string[] => textsTo(telegram, RIG_USER);
      // A user session for the wake to reach.
      telegram.pushMessage({ fromId: RIG_USER, text: 'hi' });
      await waitFor('the first answer', () => chat().includes('answer to: hi'), LONG);
      await rig.daemon.rpc('sessions.launch', {
        prompt: '[[hang]] fix the build',
        name: 'build-fix',
        workdir,
        channel: `telegram|${RIG_USER}`,
      });
      await waitFor(
        'the session to run',
        async () => {
          const { sessions } = await rig.daemon.rpc<{ sessions: { name: string; status: string }[] }>(
            'sessions.list',
            {},
          );
          return sessions.find((s) => s.name === 'build-fix')?.status === 'running';
        },
        LONG,
      );
      await waitFor('the launch notice', () => chat().some((t) => t.startsWith('↩️ [build-fix] Launched')), LONG);
      await rig.kill();

      await rig.startAndCrash('sessions.restore.after-mark');
      await rig.startAndCrash('sessions.restore.after-notice');
      await rig.startAndCrash('sessions.restore.before-clear');
      await rig.start();

      const notice = (t: string): boolean => t.startsWith('⏸️ [build-fix] Interrupted by a daemon restart');
      await waitFor('the interruption notice', () => chat().some(notice), LONG);
      await waitFor(
        'the orchestrator reply to the wake',
        () => chat().includes('noted: build-fix was interrupted'),
        LONG,
      );
      await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
      assert.equal(chat().filter(notice).length, 1, 'the chat notice is sent once');
      const wakes = rig.model.completionRequests().filter((r) => {
        const body = r.body as ChatBody;
        return isUserTurn(body) && /Coding session "build-fix" \[[^\]]+\] was interrupted/.test(lastUserText(body));
      });
      assert.equal(wakes.length, 1, 'the orchestrator is woken once');
      assert.equal(chat().filter((t) => t === 'noted: build-fix was interrupted').length, 1);

      // Nothing is owed any more: a further restart announces nothing.
      await rig.kill();
      await rig.start();
      await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
      assert.equal(chat().filter(notice).length, 1, 'not announced again');
      await rig.stop();
    });
  });
});

// Crash test of the Slack intake on a real daemon process: SIGKILLed right after a DM's Socket Mode envelope was
// acknowledged (fault `slack.intake.after-ack@2`). The DM waits behind a turn still running (the model holds its
// answer to the first DM), so it was accepted but not started when the daemon died. It was durably accepted before the
// acknowledgement, so the restarted daemon answers it, once, and the orchestrator's turn for it runs once (a
// redelivery, if the acknowledgement never left the dying process, is deduplicated). The first DM's cut-off turn is
// closed with the engine's notice.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import { chatInference, unexpectedErrors } from '../support/e2e-daemon.ts';
import { startFakeSlack } from '../support/fake-slack.ts';
import type { ChatBody } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText } from '../support/mock-openai-chat.ts';
import { startMockOpenAIChat } from '../support/mock-openai-chat.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const USER = 'UCRASH';
const DM = `D${USER}`;
const LONG = 60_000;
const ANSWER = 'Answered after the crash.';

/** The environment of a child daemon: none of the test's SWITCHBOARD_* or SLACK_* settings. */
function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of Object.keys(process.env))
    if (key.startsWith('SWITCHBOARD_') || key.startsWith('SLACK_')) env[key] = undefined;
  return { ...env, ...extra };
}

describe('SIGKILL of the daemon right after a Slack message was acknowledged', () => {
  it('loses nothing: the restarted daemon answers the message once', async () => {
    const dir = tempDir('sb-crash-slack-');
    const home = join(dir.path, 'home');
    mkdirSync(home, { recursive: true });
    const slack = await startFakeSlack();
    const model = await startMockOpenAIChat({
      handler: (body) => {
        const last = lastUserText(body);
        if (last.includes('take your time')) return { ...chatText('Too late.'), delayMs: 120_000 };
        return chatText(last.includes('hello after crash') ? ANSWER : 'Noted.');
      },
    });
    writeFileSync(
      join(home, 'config.json5'),
      JSON.stringify({
        workspaces: [dir.path],
        log: { level: 'info' },
        channels: {
          slack: {
            enabled: true,
            botToken: slack.botToken,
            appToken: slack.appToken,
            apiUrl: slack.apiUrl,
            allowedUserIds: [USER],
          },
          web: { enabled: false },
        },
        inference: chatInference(model.url),
        heartbeat: { intervalMinutes: 0 },
      }),
    );
    let daemon: DaemonProcess | null = null;
    try {
      daemon = await startDaemonProcess(home, childEnv({ SWITCHBOARD_FAULT: 'slack.intake.after-ack@2' }), 30_000);
      await waitFor('the Socket Mode connection', () => slack.socket.connections > 0, LONG);
      slack.pushMessage({ user: USER, text: 'first, take your time' });
      await waitFor(
        'the first turn to ask the model',
        () => model.completionRequests().some((r) => JSON.stringify(r.body).includes('take your time')),
        LONG,
      );
      const pushed = slack.pushMessage({ user: USER, text: 'hello after crash' });
      const exit = await daemon.exited();
      assert.equal(exit.signal, 'SIGKILL', daemon.output());
      assert.ok(daemon.output().includes('fault injected at slack.intake.after-ack'));
      assert.equal(slack.textsIn(DM).length, 0, 'nothing was answered before the crash');

      daemon = await startDaemonProcess(home, childEnv(), 30_000);
      await waitFor('the answer', () => slack.textsIn(DM).includes(ANSWER), LONG);
      const health = async (): Promise<{ outbox: { pending: number } }> => {
        const response = await fetch(`${daemon?.url}/healthz`, {
          headers: { authorization: `Bearer ${daemon?.token}` },
        });
        return (await response.json()) as { outbox: { pending: number } };
      };
      await waitFor('the outbox to be empty', async () => (await health()).outbox.pending === 0, LONG);
      await waitFor('the envelope to be acknowledged', () => slack.socket.ackOf(pushed.envelopeId), LONG);
      assert.deepEqual(slack.textsIn(DM).sort(), [ANSWER, 'Internal error.'].sort(), 'each DM answered once');
      const turns = model
        .completionRequests()
        .filter((r) => lastUserText(r.body as ChatBody).includes('hello after crash'));
      assert.equal(turns.length, 1, 'the orchestrator turn ran once');
      assert.deepEqual(unexpectedErrors(daemon.output()), [], 'no error lines after the restart');
      daemon.child.kill('SIGTERM');
      assert.equal((await daemon.exited()).code, 0, daemon.output());
      daemon = null;
    } catch (error) {
      console.log(`posts: ${JSON.stringify(slack.posts.map((p) => [p.channel, p.text]))}\n${daemon?.output() ?? ''}`);
      throw error;
    } finally {
      await killDaemonProcess(daemon);
      await slack.close();
      await model.close();
      dir.remove();
    }
  });
});

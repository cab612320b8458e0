// Crash tests of a user turn's reply on the real daemon, killed exactly inside each window (fault points): after the
// answer was recorded and before it was queued, after it was queued and before the turn's end record, and after the
// restore answered a cut-off turn "Internal error." and before it closed the turn. After the restart the recorded answer
// is delivered instead of "Internal error.", and no turn is answered twice.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { RIG_USER, withCrashRig } from '../support/crash-rig.ts';
import { systemText, textsTo } from '../support/e2e-daemon.ts';
import type { ChatBody, ChatReply } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;

function isUserTurn(body: ChatBody): boolean {
  return systemText(body).includes(`serves the chat telegram|${RIG_USER}`);
}

/** The outbox rows of the daemon's database (read-only). */
function outboxTexts(home: string): string[] {
  const db = new DatabaseSync(join(home, 'state.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT text FROM outbox_messages ORDER BY id').all() as { text: string }[]).map((r) => r.text);
  } finally {
    db.close();
  }
}

const answer = (body: ChatBody): ChatReply => chatText(`answer to: ${lastUserText(body)}`);

describe('SIGKILL of the daemon inside the reply windows of a user turn', { concurrency: true }, () => {
  it('killed after the answer was recorded and before it was queued: the restart delivers the answer, not "Internal error."', async () => {
    await withCrashRig('sb-crash-reply-rec-', answer, {}, async (rig) => {
      const { telegram } = rig;
      await rig.start({ SWITCHBOARD_FAULT: 'engine.reply.after-record' });
      telegram.pushMessage({ fromId: RIG_USER, text: 'hello' });
      await rig.crashed('engine.reply.after-record');
      assert.deepEqual(outboxTexts(rig.home), [], 'nothing was queued before the kill');

      await rig.start();
      await waitFor('the answer', () => textsTo(telegram, RIG_USER).includes('answer to: hello'), LONG);
      await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
      assert.deepEqual(
        textsTo(telegram, RIG_USER),
        ['answer to: hello'],
        'the recorded answer, once, and no "Internal error."',
      );
      assert.equal(
        rig.model.completionRequests().filter((r) => isUserTurn(r.body as ChatBody)).length,
        1,
        'the turn is not re-run',
      );
      assert.equal(rig.restored().cutOff, 1);
      await rig.stop();
    });
  });

  it('killed after the answer was queued and before the turn ended: the answer is queued once, no "Internal error."', async () => {
    await withCrashRig('sb-crash-reply-end-', answer, {}, async (rig) => {
      const { telegram } = rig;
      await rig.start({ SWITCHBOARD_FAULT: 'engine.turn.before-end' });
      telegram.pushMessage({ fromId: RIG_USER, text: 'hello' });
      await rig.crashed('engine.turn.before-end');
      assert.deepEqual(outboxTexts(rig.home), ['answer to: hello'], 'the answer was queued before the kill');

      await rig.start();
      await waitFor('the answer', () => textsTo(telegram, RIG_USER).includes('answer to: hello'), LONG);
      await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
      assert.equal(rig.restored().cutOff, 1);
      assert.deepEqual(
        outboxTexts(rig.home),
        ['answer to: hello'],
        'restore handed the recorded answer over again under its key: still one row',
      );
      assert.ok(!textsTo(telegram, RIG_USER).includes('Internal error.'), 'no "Internal error." for an answered turn');
      // A further restart finds the turn closed.
      await rig.kill();
      await rig.start();
      assert.equal(rig.restored().cutOff, 0);
      await rig.stop();
    });
  });

  it('killed after restore queued "Internal error." and before it closed the turn: "Internal error." once', async () => {
    let holding = true;
    const held: (() => void)[] = [];
    const handler = (body: ChatBody): ChatReply | Promise<ChatReply> => {
      if (holding && isUserTurn(body))
        return new Promise<ChatReply>((resolve) => held.push(() => resolve(chatText('answered too late'))));
      return answer(body);
    };
    await withCrashRig('sb-crash-reply-cut-', handler, {}, async (rig) => {
      const { telegram } = rig;
      await rig.start();
      telegram.pushMessage({ fromId: RIG_USER, text: 'hello' });
      await waitFor('the turn to call the model', () => held.length === 1, LONG);
      await rig.kill();
      holding = false;
      for (const resolve of held.splice(0)) resolve();

      await rig.startAndCrash('engine.cut-off.before-end');
      assert.deepEqual(outboxTexts(rig.home), ['Internal error.'], '"Internal error." was queued before the kill');

      await rig.start();
      await waitFor('"Internal error."', () => textsTo(telegram, RIG_USER).includes('Internal error.'), LONG);
      await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
      assert.equal(rig.restored().cutOff, 1, 'the turn was still open');
      assert.deepEqual(textsTo(telegram, RIG_USER), ['Internal error.'], 'answered once');
      assert.deepEqual(outboxTexts(rig.home), ['Internal error.']);
      await rig.stop();
    });
  });
});

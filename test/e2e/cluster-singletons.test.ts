// The singletons of a cluster of three daemon processes on one PostgreSQL: a cron task fires once per due time in the
// whole cluster; the Telegram poller, the engine and the outbox run on the holder of the `primary` lease, and when that
// node is SIGKILLed another takes them over: the messages sent meanwhile are each answered once, and the engine there
// continues the conversation with every message acknowledged before (its logs rebuilt from the database): a turn cut
// off by the kill is answered "Internal error." once, a message queued behind it is run. Engine requests made on a
// node that does not serve the engine are run by the holder.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatClusterPerSuite, startChatCluster } from '../support/chat-cluster.ts';
import { heldBy } from '../support/cluster-load.ts';
import { isCronTurn, systemText } from '../support/e2e-daemon.ts';
import type { ChatBody } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText, messageText } from '../support/mock-openai-chat.ts';
import { postgresSkip } from '../support/postgres.ts';
import { waitFor } from '../support/wait-for.ts';

const USER = 6161;
const LONG = 60_000;

function isUserTurn(body: ChatBody): boolean {
  return systemText(body).includes(`serves the chat telegram|${USER}`);
}

describe('singletons of a cluster of three nodes', { skip: postgresSkip() }, () => {
  const held: (() => void)[] = [];
  const nodes = [{ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }];
  const { cluster, telegram, bodies, chat } = chatClusterPerSuite(
    () =>
      startChatCluster('sb-cluster-singletons-', nodes, {
        user: USER,
        handler: (body) => {
          if (isCronTurn(body)) return chatText('cron run done');
          // A turn of "held" waits until the test lets it go (its node is SIGKILLed meanwhile).
          if (lastUserText(body) === 'held')
            return new Promise((resolve) => held.push(() => resolve(chatText('too late'))));
          return chatText(`answer to: ${lastUserText(body)}`);
        },
        // A task added on another node is seen by the scheduler's holder at its next re-arm, at most this far apart.
        config: { scheduler: { maxWaitMs: 2000 } },
      }),
    { beforeStop: () => held.splice(0).forEach((release) => release()) },
  );

  it('fires a cron task once per due time across the three nodes', async () => {
    await cluster().node('beta').rpc('cron.add', { name: 'tick', schedule: '* * * * *', prompt: 'Count the ticks.' });
    const dues = (): string[] =>
      bodies()
        .filter(isCronTurn)
        .map((b) => /run due (\S+)\]/.exec(lastUserText(b))?.[1] ?? 'unknown');
    await waitFor('two due times to run', () => (new Set(dues()).size >= 2 ? true : undefined), 150_000);
    const all = dues();
    assert.equal(all.length, new Set(all).size, `each due time ran once: ${all.join(', ')}`);
    await cluster().node('beta').rpc('cron.remove', { task: 'tick' });
  });

  it('moves the Telegram poller and the engine to another node when their holder is SIGKILLed; nothing lost or doubled', async () => {
    const fake = telegram();
    fake.pushMessage({ fromId: USER, text: 'one' });
    await waitFor('the answer to one', () => chat().includes('answer to: one'), LONG);
    const first = await heldBy(cluster(), 'primary');
    await cluster().kill(first);

    fake.pushMessage({ fromId: USER, text: 'two' });
    fake.pushMessage({ fromId: USER, text: 'three' });
    await waitFor(
      'the answers to two and three',
      () => chat().includes('answer to: two') && chat().includes('answer to: three'),
      LONG,
    );
    const second = await heldBy(cluster(), 'primary');
    assert.notEqual(second, first);
    for (const text of ['one', 'two', 'three']) {
      assert.equal(chat().filter((t) => t === `answer to: ${text}`).length, 1, `"${text}" answered once`);
      const asked = bodies().filter((b) => isUserTurn(b) && lastUserText(b) === text);
      assert.equal(asked.length, 1, `"${text}" reached the model once`);
    }
    // The engine on the new node continued the conversation: the turn of "two" saw "one" and its answer.
    const two = bodies().find((b) => isUserTurn(b) && lastUserText(b) === 'two');
    const history = (two?.messages ?? []).map((m) => messageText(m));
    assert.ok(history.includes('one'), 'the first message is in the history');
    assert.ok(history.includes('answer to: one'), 'its answer is in the history');
  });

  it('takes an engine request on a node that does not serve the engine and runs it on the holder', async () => {
    const holder = await heldBy(cluster(), 'primary');
    const other = cluster()
      .up()
      .find((name) => name !== holder);
    assert.ok(other, 'a node that does not serve the engine');
    const { sessions } = await cluster()
      .node(holder)
      .rpc<{ sessions: { id: string; descriptor: { type: string } }[] }>('engine.sessions');
    const user = sessions.find((s) => s.descriptor.type === 'user');
    assert.ok(user, 'the user session');
    const sent = await cluster()
      .node(other)
      .rpc<{ sessionId: string }>('engine.send', { session: user.id, text: 'news from afar' });
    assert.equal(sent.sessionId, user.id);
    await waitFor(
      'the turn of the routed message',
      () => bodies().some((b) => (b.messages ?? []).some((m) => messageText(m).includes('news from afar'))),
      LONG,
    );
  });

  it('runs on the new holder every message the lost one acknowledged: a cut-off turn answered once, a queued one run', async () => {
    const fake = telegram();
    const holder = await heldBy(cluster(), 'primary');
    fake.pushMessage({ fromId: USER, text: 'held' });
    await waitFor(
      'the held turn to reach the model',
      () => bodies().some((b) => isUserTurn(b) && lastUserText(b) === 'held'),
      LONG,
    );
    fake.pushMessage({ fromId: USER, text: 'queued behind' });
    await waitFor(
      'the queued message to be acknowledged',
      async () => {
        const { sessions } = await cluster()
          .node(holder)
          .rpc<{ sessions: { descriptor: { type: string }; queued: number }[] }>('engine.sessions');
        return sessions.some((s) => s.descriptor.type === 'user' && s.queued >= 1) ? true : undefined;
      },
      LONG,
    );
    await cluster().kill(holder);
    await waitFor(
      'the queued message answered on the new holder',
      () => chat().includes('answer to: queued behind'),
      LONG,
    );
    assert.notEqual(await heldBy(cluster(), 'primary'), holder);
    assert.equal(chat().filter((t) => t === 'answer to: queued behind').length, 1);
    assert.equal(
      bodies().filter((b) => isUserTurn(b) && lastUserText(b) === 'held').length,
      1,
      'the cut-off turn is not run again',
    );
    assert.equal(chat().filter((t) => t === 'Internal error.').length, 1, 'the cut-off turn is answered once');
    assert.ok(!chat().includes('too late'));
  });
});

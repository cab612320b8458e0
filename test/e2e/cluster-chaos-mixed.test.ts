// The chaos scenario on a cluster under mixed load: three daemon processes share one PostgreSQL while random nodes are
// SIGKILLed and started again (seeded: CHAOS_SEED replays a run), and clients drive random nodes at once with Telegram
// messages (the poller is a singleton that moves after a kill; the orchestrator answers through a fake model), keyed
// POST /hooks/wake, keyed sessions.launch then sessions.send to the running sessions, and signed Linear webhook
// deliveries, each keyed request retried after a failure or a lost answer. Then, once the cluster settled, we count:
// every acknowledged item exists once — each Telegram message and each wake answered once (or, when its turn was cut
// off by a kill, told so once), each launch one session whose agent started once, each acknowledged send in its
// session's transcript once, each delivery processed — and no session is left running on a node that is gone.
// The first round stalls the `primary` holder (SIGSTOP past the node timeout, then SIGCONT) so that the others declare it
// lost while it lives on; CHAOS_FREEZE=0 leaves that round out (kills only).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ChatCluster } from '../support/chat-cluster.ts';
import { startChatCluster } from '../support/chat-cluster.ts';
import type { Chooser } from '../support/cluster-load.ts';
import {
  agentStarts,
  chooser,
  holderOf,
  launchKeyed,
  outputLines,
  pause,
  resentAfterLoss,
  seeded,
  sendOnce,
  untilAcknowledged,
  wakeOn,
} from '../support/cluster-load.ts';
import { answerTurn, countReplies, countTurns, turnTokens } from '../support/cluster-load-chat.ts';
import { commentDelivery, deliverOn, linearSection } from '../support/cluster-load-linear.ts';
import { chatSettled, deliveriesSettled, sessionsSettled } from '../support/cluster-load-settle.ts';
import { logLines, systemText } from '../support/e2e-daemon.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { startFakeLinear } from '../support/fake-linear.ts';
import { postgresSkip } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const NODES = ['n1', 'n2', 'n3'];
const USER = 7171;
// Each driver goes on while the nodes are being killed, and makes at least this many.
const MESSAGES = 12;
const WAKES = 8;
const LAUNCHES = 10;
const SENDS = 2;
const DELIVERIES = 10;
const KILLS = 4;
const SETTLE = 90_000;
const FREEZE = process.env.CHAOS_FREEZE !== '0';
/** The rounds of the killer: the stall (unless CHAOS_FREEZE=0), then the kills. */
const ROUNDS = KILLS + (FREEZE ? 1 : 0);

describe('chaos on a cluster: SIGKILL random nodes under mixed load', { skip: postgresSkip() }, () => {
  const logDir = tempDir('sb-cluster-mixed-log-');
  const agentLog = join(logDir.path, 'agent-starts.jsonl');
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
  // One generator per driver, so the killer's choices (which nodes, when) replay exactly whatever the timing of the rest.
  const stream = (n: number): Chooser => chooser(seeded(seed * 31 + n));
  const choose = stream(0);
  const killing = stream(1);
  let running: ChatCluster | undefined;
  let linear: FakeLinear | undefined;

  before(async () => {
    console.log(`cluster-chaos-mixed: CHAOS_SEED=${seed}`);
    linear = await startFakeLinear();
    running = await startChatCluster(
      'sb-cluster-mixed-',
      NODES.map((name) => ({ name, maxSessions: 6 })),
      {
        user: USER,
        handler: (body) => answerTurn(body, 300),
        // Not shorter: on a loaded 2-core machine a live node may miss its beats that long and be taken for lost.
        timeoutSec: 4,
        agentEnv: { FAKE_AGENT_LOG: agentLog },
        config: { hooks: { enabled: true }, linear: linearSection(linear) },
      },
    );
  });

  after(async () => {
    // The daemons' warnings and errors, for a failed run (kept in a file next to the test's output).
    const lines = (running?.rig.runs ?? []).flatMap(({ name, daemon }, i) =>
      logLines(daemon.output())
        .filter((l) => l.level >= 40)
        .map((l) => `${name}#${i} ${JSON.stringify(l)}`),
    );
    if (lines.length > 0) writeFileSync(join(tmpdir(), `cluster-chaos-mixed-${seed}.log`), `${lines.join('\n')}\n`);
    await running?.stop();
    await linear?.close();
    logDir.remove();
  });

  it(`loses nothing acknowledged and does nothing twice (CHAOS_SEED=${seed})`, async () => {
    if (!running) throw new Error('the rig did not start');
    const { rig: cluster, telegram: fake, bodies } = running;
    // A first message makes the user's session, which the wakes then reach.
    // Each chat token's Telegram message: a turn a kill cut off before it asked the model is answered "Internal error."
    // in reply to that message (and its message is never run again), so that token is never asked.
    const messageIds = new Map<string, number>([
      ['msg-0', fake.pushMessage({ fromId: USER, text: 'msg-0' }).messageId],
    ]);
    const cutOffBeforeAsked = (unasked: readonly string[]): boolean => {
      const { cutOffReplyTo, cutOffUnaddressed } = countReplies(fake, USER);
      const wakes = unasked.filter((t) => !messageIds.has(t));
      const chats = unasked.filter((t) => messageIds.has(t));
      return (
        chats.every((t) => cutOffReplyTo.includes(messageIds.get(t) as number)) && wakes.length <= cutOffUnaddressed
      );
    };
    await waitFor('the first answer', () => countReplies(fake, USER).answered.has('msg-0'), SETTLE);

    const launched = new Map<string, string>();
    const sent = new Map<string, string[]>();
    const unanswered: string[] = [];
    const woken: string[] = [];
    const delivered: string[] = [];
    let chaos = true;
    // `count` items `gapMs` apart on average, then more while the kills go on when `extend`.
    const spaced = async (
      count: number,
      gapMs: number,
      one: (i: number) => Promise<void>,
      extend = true,
    ): Promise<void> => {
      const all: Promise<void>[] = [];
      for (let i = 1; i <= count || (extend && chaos); i += 1) {
        all.push(one(i));
        await pause(gapMs * (0.5 + choose.random()));
      }
      await Promise.all(all);
    };
    const pushed = ['msg-0'];
    const chat = spaced(MESSAGES, 800, async (i) => {
      messageIds.set(`msg-${i}`, fake.pushMessage({ fromId: USER, text: `msg-${i}` }).messageId);
      pushed.push(`msg-${i}`);
    });
    const wakes = spaced(WAKES, 1_200, async (i) => {
      await untilAcknowledged(cluster, choose, (node) => wakeOn(cluster, node, `wake-key-${i}`, `wake-${i}`));
      woken.push(`wake-${i}`);
    });
    const launches = spaced(
      LAUNCHES,
      1_500,
      async (i) => {
        const key = `chaos-${i}`;
        const id = await launchKeyed(cluster, choose, key);
        launched.set(key, id);
        for (let j = 1; j <= SENDS; j += 1) {
          await pause(300 + choose.random() * 500);
          const text = `steer ${key} #${j}`;
          if (await sendOnce(cluster, choose, id, text)) sent.set(id, [...(sent.get(id) ?? []), text]);
          else unanswered.push(text);
        }
      },
      false,
    );
    const webhooks = spaced(DELIVERIES, 1_000, async (i) => {
      const delivery = commentDelivery(linear as FakeLinear, `chaos comment ${i}`);
      await untilAcknowledged(cluster, choose, (node) => deliverOn(cluster, node, delivery));
      delivered.push(delivery.deliveryId);
    });
    const victims: string[] = [];
    const killer = (async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        await pause(700 + killing.random() * 800);
        const victim = killing.pick(cluster.up());
        const primary = await holderOf(cluster, 'primary');
        // The first round (unless CHAOS_FREEZE=0) stalls the holder of `primary` (SIGSTOP) past the node timeout, so the
        // others declare it lost while it lives on: it must neither take in nor answer anything once it resumes.
        if (FREEZE && round === 0 && primary) {
          victims.push(`${primary} frozen`);
          await cluster.freeze(primary, 4_000);
          continue;
        }
        victims.push(victim === primary ? `${victim} (primary)` : victim);
        await cluster.kill(victim);
        await pause(500 + killing.random() * 1_000);
        await cluster.start(victim);
      }
      chaos = false;
    })();
    await Promise.all([chat, wakes, launches, webhooks, killer]);

    // Settle: every chat token asked of the model, every turn's reply delivered, every delivery handled.
    const tokens = [...pushed, ...woken];
    await waitFor('the chat to settle', () => chatSettled(cluster, tokens, bodies(), cutOffBeforeAsked), SETTLE);
    const deliveries = await waitFor('every Linear delivery processed', () => deliveriesSettled(cluster), SETTLE);
    const sessions = await waitFor('no session stranded on a lost node', () => sessionsSettled(cluster), SETTLE);

    // Chat: each token answered at most once and asked of the model in at most one turn; one not answered was in a turn
    // cut off by a kill, which was told once ("Internal error."), never more often than there were kills.
    const replies = countReplies(fake, USER);
    const turns = countTurns(bodies());
    const statuses = sessions.map((s) => s.status).join(' ');
    const sends = [...sent.values()].flat().length;
    const retried = deliveries.filter((d) => d.attempts > 1).length;
    console.log(
      `seed ${seed}: killed ${victims.join(', ')}; answered ${replies.answered.size}/${tokens.length}, cut off ${replies.cutOff}; sessions ${statuses};` +
        ` sends acknowledged ${sends}, unanswered ${unanswered.length}; deliveries run again ${retried}`,
    );
    // A reply whose sender was lost mid-send is sent again by the new holder (Telegram has no idempotency key): such a
    // resend, logged as one, is the only double allowed.
    const doubled = tokens.filter((t) => (replies.answered.get(t) ?? 0) > 1);
    assert.ok(
      doubled.length <= resentAfterLoss(cluster),
      `answered twice: ${doubled.join(', ')} (${resentAfterLoss(cluster)} resent after a loss)`,
    );
    for (const token of tokens) {
      assert.ok((replies.answered.get(token) ?? 0) <= 2, `${token} answered ${replies.answered.get(token)} times`);
      if (turns.has(token)) assert.equal(turns.get(token), 1, `${token} asked of the model in one turn`);
      else assert.equal(replies.answered.has(token), false, `${token} answered though never asked`);
    }
    const neverAsked = tokens.filter((t) => !turns.has(t));
    assert.ok(
      cutOffBeforeAsked(neverAsked),
      `never asked of the model, and no cut-off notice for their turns: ${neverAsked.join(', ')}`,
    );
    const lost = tokens.filter((t) => !replies.answered.has(t));
    assert.ok(replies.cutOff <= ROUNDS, `at most one cut-off turn per kill or stall (${replies.cutOff})`);
    if (lost.length > 0) {
      const asked = bodies()
        .filter((b) => turnTokens(b).some((t) => lost.includes(t)))
        .map((b) => `${systemText(b).slice(0, 200)} … ${turnTokens(b).join(' ')}`);
      assert.ok(
        replies.cutOff >= 1,
        `unanswered ${lost.join(', ')} with no cut-off notice; asked in:\n${asked.join('\n')}`,
      );
    }
    assert.deepEqual(replies.other, [], 'nothing else was said');

    // Launches: each acknowledged key is one session (the one answered), its agent started at most once (once unless
    // its node was lost before the start); no other session.
    assert.equal(launched.size, LAUNCHES);
    assert.deepEqual(sessions.map((s) => s.name).sort(), [...launched.keys()].sort());
    const starts = agentStarts(agentLog);
    for (const session of sessions) {
      assert.equal(launched.get(session.name), session.id, session.name);
      const started = starts.filter((cwd) => cwd === join(cluster.workspace, session.name)).length;
      assert.ok(started <= 1, `${session.name} started at most once (${started})`);
      // A session still queued (its node at capacity) has not started; one interrupted may have been lost before.
      if (session.status === 'queued') assert.equal(started, 0, `${session.name} (queued) not started`);
      else if (session.status !== 'interrupted')
        assert.equal(started, 1, `${session.name} (${session.status}) started`);
      // Each acknowledged send is in the transcript once; an unanswered one at most once.
      // (Read from another node than the session's maybe: what its node logged reaches the table in groups.)
      const acknowledged = sent.get(session.id) ?? [];
      const lines = await waitFor(
        `the sends acknowledged to ${session.name} in its transcript`,
        async () => {
          const all = await outputLines(cluster, session.id);
          const missing = acknowledged.filter((text) => !all.some((l) => l.includes(text)));
          if (missing.length > 0)
            throw new Error(`${session.name} (${session.status}) misses ${missing.join(', ')}:\n${all.join('\n')}`);
          return all;
        },
        30_000,
      );
      for (const text of acknowledged) {
        assert.equal(lines.filter((l) => l.includes(text)).length, 1, `"${text}" in ${session.name} once`);
      }
      for (const text of unanswered.filter((t) => t.includes(`${session.name} `))) {
        assert.ok(lines.filter((l) => l.includes(text)).length <= 1, `"${text}" in ${session.name} at most once`);
      }
    }

    // Linear: each acknowledged delivery stored once and processed.
    assert.ok(delivered.length >= DELIVERIES);
    assert.deepEqual(deliveries.map((d) => d.delivery_id).sort(), [...delivered].sort());
    for (const d of deliveries) assert.equal(d.status, 'done', `${d.delivery_id} processed`);
  });
});

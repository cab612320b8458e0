import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { StoreManagerFixture } from '../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../test/support/manager-on-store.ts';
import { RecordingOutbox } from '../../test/support/recording-outbox.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import type { LaunchRequest } from '../coding/session-manager.ts';
import { silentLogger } from '../core/logger.ts';
import { foregroundOperation } from '../operations/foreground.ts';
import type { NotificationRouter } from './notification-router.ts';
import { createNotificationRouter } from './notification-router.ts';

const TG = 'telegram|42';
const WEB = 'web|w1';
const ok = { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 } as const;

describe('NotificationRouter', () => {
  let f: StoreManagerFixture;
  let outbox: RecordingOutbox;
  let router: NotificationRouter;

  function routerFor(fixture: StoreManagerFixture, box: RecordingOutbox): NotificationRouter {
    return createNotificationRouter({
      sessions: fixture.manager,
      outbox: box,
      clock: fixture.clock,
      config: fixture.config,
      logger: silentLogger(),
    });
  }

  /** Launches a session that reports to TG and has started; the launch message is cleared. */
  async function launch(name: string, request: Partial<LaunchRequest> = {}) {
    const session = await f.manager.launch({
      prompt: `do the ${name} task`,
      workdir: f.workdir,
      originChannel: TG,
      name,
      ...request,
    });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: `backend-${name}` });
    outbox.clear();
    return { session, run };
  }

  /** What claude_fg does: the channel now streams the session. */
  async function foreground(sessionId: string, channel: string): Promise<void> {
    await f.manager.setView(await f.manager.get(sessionId), channel, true);
  }

  beforeEach(async () => {
    f = await openManagerFixture((path) => openTestStore(path));
    outbox = new RecordingOutbox();
    router = routerFor(f, outbox);
    router.start();
  });
  afterEach(async () => {
    router.stop();
    await f.close();
  });

  it('says Launched and Resumed to the origin, with the prompt', async () => {
    const session = await f.manager.launch({
      prompt: 'add a parser\nfor   the config file',
      workdir: f.workdir,
      originChannel: TG,
      name: 'parser',
    });
    assert.deepEqual(outbox.sent, [{ to: TG, text: '↩️ [parser] Launched:\nadd a parser for the config file' }]);
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-1' });
    await f.manager.kill(session.id);
    outbox.clear();
    await f.manager.resume(session.id, { prompt: 'x'.repeat(100) });
    assert.deepEqual(outbox.to(TG), [`↩️ [parser] Resumed:\n${'x'.repeat(79)}…`]);
  });

  it('sends nothing, and does not throw, for a session whose origin has no chat target', async () => {
    for (const origin of ['unknown', 'cli']) {
      const session = await f.manager.launch({
        prompt: 'p',
        workdir: f.workdir,
        originChannel: origin,
        permissionMode: 'default',
      });
      const run = f.harness.last;
      await run.emit({ type: 'started', backendSessionId: `b-${origin}` }, { type: 'text', text: 'Which one?' }, ok);
      await f.manager.send(session.id, 'the first', { source: 'agent' });
      await run.emit(
        { type: 'permission', requestId: 'r', tool: 'Bash', input: {} },
        { type: 'turnEnd', outcome: { ok: false, reason: 'budget_exhausted', message: 'budget' }, costUsd: 5 },
      );
    }
    f.clock.advance(60 * 60_000);
    assert.deepEqual(outbox.sent, []);
  });

  it('debounces streamed text per session and channel, and keeps each channel’s seen mark on what it was sent', async () => {
    const a = await launch('alpha');
    const b = await launch('beta');
    for (const s of [a, b]) {
      await foreground(s.session.id, WEB);
      await foreground(s.session.id, TG);
    }
    await a.run.emit({ type: 'text', text: 'a1' });
    await b.run.emit({ type: 'text', text: 'b1' });
    f.clock.advance(200);
    await a.run.emit({ type: 'text', text: 'a2' });
    f.clock.advance(299);
    assert.deepEqual(outbox.sent, [], 'nothing before the 500 ms window closes');
    f.clock.advance(1);
    assert.deepEqual(outbox.to(WEB).sort(), ['a1\na2', 'b1']);
    assert.deepEqual(outbox.to(TG).sort(), ['a1\na2', 'b1']);
    assert.equal(outbox.sent.length, 4);
    await a.run.emit({ type: 'text', text: 'a3' });
    f.clock.advance(500);
    assert.deepEqual(outbox.to(WEB).slice(2), ['a3']);
    // The seen mark moves once the Outbox has recorded the batch.
    await new Promise((resolve) => setImmediate(resolve));
    const a3 = f.manager.outputBlocks(await f.manager.get(a.session.id)).at(-1);
    assert.equal(a3?.text, 'a3');
    assert.equal((await f.manager.get(a.session.id)).foreground[WEB]?.seenSeq, a3?.seq);
    assert.equal((await f.manager.get(a.session.id)).foreground[TG]?.seenSeq, a3?.seq);
  });

  it('flushes pending text before a tool line, and streams only to foreground channels', async () => {
    const { session, run } = await launch('tools');
    await foreground(session.id, WEB);
    await run.emit(
      { type: 'text', text: 'Running the tests.' },
      { type: 'tool', id: 't1', name: 'Bash', input: { command: 'npm test' } },
    );
    assert.deepEqual(outbox.sent, [
      { to: WEB, text: 'Running the tests.' },
      { to: WEB, text: '🔧 Bash — npm test' },
    ]);
    await run.emit({ type: 'toolResult', id: 't1', isError: false }, { type: 'text', text: 'Green.' });
    f.clock.advance(500);
    assert.deepEqual(outbox.to(WEB).at(-1), 'Green.');
    assert.deepEqual(outbox.to(TG), [], 'the background origin gets no stream');
  });

  it('tells a background origin what the session asks, what was sent to it, and quietly when a turn just ended', async () => {
    const { session, run } = await launch('docs', { permissionMode: 'default' });
    await run.emit(
      { type: 'text', text: 'I changed the parser.' },
      { type: 'tool', id: 't', name: 'Edit', input: { file_path: 'src/a.ts' } },
    );
    await run.emit(
      { type: 'toolResult', id: 't', isError: false },
      { type: 'text', text: 'Should I also update the **docs**?' },
      ok,
    );
    await f.manager.send(session.id, 'yes please', { source: 'agent' });
    await run.emit(
      { type: 'question', text: 'Which format: Markdown or AsciiDoc?' },
      { type: 'text', text: 'Waiting for your answer.' },
      ok,
    );
    await f.manager.send(session.id, 'markdown', { source: 'user' });
    await run.emit({ type: 'permission', requestId: 'r1', tool: 'Bash', input: { command: 'rm -rf build' } });
    await f.manager.send(session.id, 'yes', { source: 'user' });
    await run.emit({ type: 'text', text: 'All done.' }, ok);
    f.clock.advance(60_000);
    assert.deepEqual(outbox.to(TG), [
      '🔔 [docs] asks:\nI changed the parser.\nShould I also update the docs?',
      '↩️ [docs] Responded:\nyes please',
      '🔔 [docs] asks:\nWhich format: Markdown or AsciiDoc?',
      '↩️ [docs] Responded:\nmarkdown',
      '🔔 [docs] asks permission:\n🔧 Bash — rm -rf build\nAllow: /claude_respond docs yes\nDeny: /claude_respond docs no, <why>',
      '↩️ [docs] Answered permission request:\nyes',
      '💬 [docs] is waiting for input:\nAll done.',
    ]);
    assert.equal(outbox.sent.length, 7, 'nothing to other channels, one message per turn');
  });

  it('says a stall is silence, not a wait for input, never while a tool runs', async () => {
    const { run } = await launch('slow');
    await run.emit(
      { type: 'text', text: 'Building…' },
      { type: 'tool', id: 't', name: 'Bash', input: { command: 'make' } },
    );
    f.clock.advance(5 * 60_000);
    assert.deepEqual(outbox.sent, [], 'a long tool run is not a question');
    await run.emit({ type: 'toolResult', id: 't', isError: false });
    f.clock.advance(15_000);
    assert.deepEqual(outbox.to(TG), [
      '⏳ [slow] has been silent for 15s with no tool running (still thinking, or stuck):\nBuilding…',
    ]);
    assert.doesNotMatch(outbox.to(TG).join('\n'), /waiting/);
  });

  it('tells a streaming channel a stall is not a wait, with hints it can paste', async () => {
    const { session, run } = await launch('thinker');
    await foreground(session.id, WEB);
    await run.emit({ type: 'text', text: 'Let me think.' });
    f.clock.advance(15_000);
    const stalled = outbox.to(WEB).at(-1) ?? '';
    assert.match(stalled, /^⏳ Session thinker \[[^\]]+\] has been silent for 15s \(15s\) with no tool running/);
    assert.match(
      stalled,
      /It is not waiting for you\. Nudge it: \/claude_respond thinker <message>, or stop it: \/claude_kill thinker$/,
    );
    assert.doesNotMatch(stalled, /waiting for input/);
  });

  it('completes, fails and is killed with the Level-1 texts; the completion preview is the stripped tail', async () => {
    const done = await launch('done', { multiTurn: false });
    const long = `START ${'filler words '.repeat(100).trim()}`;
    await done.run.emit(
      { type: 'text', text: long },
      { type: 'text', text: '## Summary\n**Fixed** the `parse()` bug in _src/parse_util.ts_' },
      { ...ok, costUsd: 0.1234 },
    );
    const completed = outbox.to(TG)[0] ?? '';
    assert.match(completed, /^✅ \[done\] Completed\n {3}📁 .+\/work\n {3}💰 \$0\.1234\n\n…/);
    assert.ok(completed.endsWith('filler words\nSummary\nFixed the parse() bug in src/parse_util.ts'), completed);
    assert.ok(!completed.includes('START'), 'the preview is the tail, not the beginning');

    const crash = await launch('crash');
    await crash.run.emit({ type: 'exited', code: 3, error: 'agent process exited with code 3' });
    assert.deepEqual(outbox.to(TG), [
      `❌ [crash] Failed\n   📁 ${f.workdir}\n   📝 "do the crash task"\n   ⚠️ agent process exited with code 3`,
    ]);

    const stop = await launch('stop');
    await f.manager.kill(stop.session.id);
    assert.deepEqual(outbox.to(TG).at(-1), `⛔ [stop] Killed\n   📁 ${f.workdir}\n   📝 "do the stop task"`);
  });

  it('always previews the last output in the completion, even after a waiting message quoted it', async () => {
    const { run } = await launch('quits');
    await run.emit({ type: 'text', text: 'Finished the refactor.' }, { ...ok, costUsd: 0.5 });
    await run.emit({ type: 'exited', code: 0 });
    assert.deepEqual(outbox.to(TG), [
      '💬 [quits] is waiting for input:\nFinished the refactor.',
      `✅ [quits] Completed\n   📁 ${f.workdir}\n   💰 $0.5000\n\nFinished the refactor.`,
    ]);
  });

  it('says a session left waiting for idleTimeoutMinutes was killed for idling', async () => {
    const { run } = await launch('idle');
    await run.emit({ type: 'text', text: 'Finished the refactor.' }, { ...ok, costUsd: 0.5 });
    f.clock.advance(30 * 60_000);
    assert.deepEqual(
      outbox.to(TG).at(-1),
      `⛔ [idle] Killed\n   📁 ${f.workdir}\n   📝 "do the idle task"\n   ℹ️ idle for 30 min`,
    );
  });

  it('sends one message, not two, to a foreground channel that is also the origin', async () => {
    const { session, run } = await launch('both');
    await foreground(session.id, TG);
    await foreground(session.id, WEB);
    f.clock.advance(65_000);
    outbox.clear();
    await run.emit({ type: 'text', text: 'Done?' }, ok);
    const waiting = `💬 Session both [${session.id}] is waiting for input (1m 5s)\n   Reply: /claude_respond both <message>`;
    assert.deepEqual(outbox.to(TG), ['Done?', waiting]);
    assert.deepEqual(outbox.to(WEB), ['Done?', waiting]);
    await f.manager.send(session.id, 'go on', { source: 'agent' });
    assert.deepEqual(outbox.to(WEB).length, 2, 'Responded goes to the origin only');
    await run.emit({ type: 'question', text: 'Rebase or merge?' }, ok);
    assert.equal(
      outbox.to(TG).at(-1),
      `💬 Session both [${session.id}] asks (1m 5s):\nRebase or merge?\n   Reply: /claude_respond both <message>`,
    );
    outbox.clear();
    await f.manager.kill(session.id);
    const killed = `⛔ Session both [${session.id}] killed (1m 5s)\n   📁 ${f.workdir}\n   📝 "do the both task"`;
    assert.deepEqual(outbox.sent, [
      { to: TG, text: killed },
      { to: WEB, text: killed },
    ]);
  });

  it('skips the chat a command came from: it already shows the command’s reply', async () => {
    const session = await f.manager.launch({
      prompt: 'p',
      workdir: f.workdir,
      originChannel: TG,
      name: 'cmd',
      via: TG,
    });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' });
    await foreground(session.id, WEB);
    await f.manager.send(session.id, 'hello', { source: 'user', via: TG });
    await f.manager.kill(session.id, 'killed by user', { via: TG });
    assert.deepEqual(outbox.to(TG), []);
    assert.deepEqual(outbox.to(WEB), [`⛔ Session cmd [${session.id}] killed (0s)\n   📁 ${f.workdir}\n   📝 "p"`]);
  });

  it('on a channel with threads the launch line opens the session thread, even in the chat that typed the launch', async () => {
    router.stop();
    router = createNotificationRouter({
      sessions: f.manager,
      outbox,
      clock: f.clock,
      config: f.config,
      logger: silentLogger(),
      threads: (channel) => channel === 'slack',
    });
    router.start();
    const SLACK = 'slack|C1';
    const session = await f.manager.launch({
      prompt: 'p',
      workdir: f.workdir,
      originChannel: SLACK,
      name: 'threaded',
      via: SLACK,
    });
    const thread = `thread-${session.id}-${SLACK}`;
    assert.deepEqual(
      outbox.deliveries.map((d) => [d.to, d.text, d.threadOf]),
      [[SLACK, '↩️ [threaded] Launched:\np', undefined]],
    );
    assert.ok(outbox.keys.has(thread), 'the launch line is keyed as the thread');
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' });
    await f.manager.kill(session.id, 'killed by user');
    assert.deepEqual(
      outbox.deliveries.slice(1).map((d) => [d.to, d.threadOf]),
      [[SLACK, thread]],
    );
  });

  it('announces an exhausted budget once, to the origin and the streaming channels', async () => {
    const { session, run } = await launch('spend');
    await foreground(session.id, WEB);
    f.clock.advance(125_000);
    await run.emit({
      type: 'turnEnd',
      outcome: { ok: false, reason: 'budget_exhausted', message: 'Reached maximum budget ($5)' },
      costUsd: 5,
    });
    const text = `⛔ Session limit reached — spend [${session.id}] (2m 5s)\n   📁 ${f.workdir}\n   💰 $5.0000 spent of its $5.00 budget (maxBudgetUsd)`;
    assert.deepEqual(
      outbox.to(WEB).filter((t) => !t.startsWith('⏳')),
      [text],
    );
    assert.deepEqual(
      outbox.to(TG).filter((t) => !t.startsWith('⏳')),
      [text],
    );
  });

  it('reminds once about a long background run, never while a channel streams it', async () => {
    const bg = await launch('bg');
    const fg = await launch('fg');
    await foreground(fg.session.id, WEB);
    for (const s of [bg, fg]) await s.run.emit({ type: 'tool', id: 't', name: 'Bash', input: { command: 'make all' } });
    outbox.clear();
    f.clock.advance(9 * 60_000);
    assert.deepEqual(outbox.sent, []);
    f.clock.advance(60_000);
    const reminder = `⏱️ Session bg [${bg.session.id}] running for 10m 0s\n   📁 ${f.workdir}\n   Use claude_fg bg to check on it, or claude_kill bg to stop it.`;
    assert.deepEqual(outbox.sent, [{ to: TG, text: reminder }]);
    f.clock.advance(60 * 60_000);
    assert.deepEqual(outbox.sent, [{ to: TG, text: reminder }], 'once per run, and never for the foreground session');
  });

  it('says a daemon restart interrupted a session and that it can be resumed, once, with no reminder after', async () => {
    const { session } = await launch('crashy');
    await f.harness.last.emit({ type: 'tool', id: 't', name: 'Bash', input: {} });
    await session.stored; // the agent's start committed before the crash (over PostgreSQL's pool it lands after the emit)
    router.stop();
    // A second daemon over the same files, as after kill -9.
    const g = await f.reopen();
    const box = new RecordingOutbox();
    const second = routerFor(g, box);
    try {
      second.start();
      await second.announceInterrupted(await g.manager.restore());
      await second.announceInterrupted(await g.manager.restore());
      assert.deepEqual(box.sent, [
        {
          to: TG,
          text: `⏸️ [crashy] Interrupted by a daemon restart\n   📁 ${f.workdir}\n   📝 "do the crashy task"\n   ↩️ It can be resumed: claude_resume crashy`,
        },
      ]);
      g.clock.advance(20 * 60_000);
      assert.equal(box.sent.length, 1);
      assert.equal((await g.manager.get(session.id)).status, 'interrupted');
    } finally {
      second.stop();
      await g.close();
    }
  });

  it('says a daemon stop interrupted a running session', async () => {
    const { session } = await launch('stopping');
    f.clock.advance(3_000);
    await f.manager.stop();
    assert.deepEqual(outbox.to(TG), [
      `⏸️ [stopping] Interrupted: the daemon is stopping (3s)\n   📁 ${f.workdir}\n   📝 "do the stopping task"\n   ↩️ It can be resumed: claude_resume stopping`,
    ]);
    assert.equal(session.status, 'interrupted');
  });

  it('keeps claude_fg catch-up exact: text pending at claude_bg is caught up later, never shown twice', async () => {
    const { session, run } = await launch('catch');
    const ctx = {
      caller: { kind: 'chat', channel: WEB, userId: 'u' } as const,
      services: { config: f.config, sessions: f.manager, clock: f.clock },
    };
    const fg = () => foregroundOperation.run(ctx, { session: session.id, lines: 30 });
    await fg();
    await run.emit({ type: 'text', text: 'one' });
    f.clock.advance(500);
    await run.emit({ type: 'text', text: 'two' });
    await f.manager.setView(await f.manager.get(session.id), WEB, false); // claude_bg before "two" was sent
    await run.emit({ type: 'text', text: 'three' });
    f.clock.advance(500);
    assert.deepEqual(outbox.to(WEB), ['one']);
    assert.deepEqual((await fg()).lines, ['two', 'three']);
    await run.emit({ type: 'text', text: 'four' });
    const again = await fg(); // claude_fg again while "four" is pending: the catch-up shows it...
    assert.deepEqual(again.lines, ['four']);
    f.clock.advance(500);
    assert.deepEqual(outbox.to(WEB), ['one'], '...so the stream does not send it again');
    await run.emit({ type: 'text', text: 'five' });
    f.clock.advance(500);
    assert.deepEqual(outbox.to(WEB), ['one', 'five']);
    await new Promise((resolve) => setImmediate(resolve)); // the seen mark moves once the Outbox recorded "five"
    assert.deepEqual((await fg()).mode, 'recent', 'nothing missed');
  });

  it('stop() flushes pending text and stops routing', async () => {
    const { session, run } = await launch('flush');
    await foreground(session.id, WEB);
    await run.emit({ type: 'text', text: 'partial' });
    router.stop();
    assert.deepEqual(outbox.to(WEB), ['partial']);
    await run.emit({ type: 'text', text: 'later' }, ok);
    f.clock.advance(10 * 60_000);
    assert.deepEqual(outbox.sent, [{ to: WEB, text: 'partial' }]);
  });
});

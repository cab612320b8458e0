import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { captureLogger } from '../../../test/support/capture-logger.ts';
import type { StoreManagerFixture } from '../../../test/support/manager-on-store.ts';
import { openManagerFixture } from '../../../test/support/manager-on-store.ts';
import { RecordingEngine } from '../../../test/support/recording-engine.ts';
import { openTestStore } from '../../../test/support/test-store.ts';
import { HeartbeatStore } from '../../store/heartbeat-store.ts';
import { WakeEventStore } from '../../store/wake-events.ts';
import { Heartbeat } from '../scheduler/heartbeat.ts';
import type { WakeRouter } from './wake-router.ts';
import { createWakeRouter } from './wake-router.ts';

const ok = { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 } as const;

describe('wake router', () => {
  let f: StoreManagerFixture;
  let engine: RecordingEngine;
  let log: ReturnType<typeof captureLogger>;
  let router: WakeRouter;

  function build(fixture: StoreManagerFixture, options: { heartbeat?: boolean } = {}): WakeRouter {
    const heartbeat = options.heartbeat
      ? new Heartbeat({
          store: new HeartbeatStore(fixture.db),
          engine,
          clock: fixture.clock,
          logger: log.logger,
          config: fixture.config,
        })
      : undefined;
    return createWakeRouter({
      db: fixture.db,
      sessions: fixture.manager,
      engine,
      ...(heartbeat ? { heartbeat } : {}),
      clock: fixture.clock,
      logger: log.logger,
      config: fixture.config,
    });
  }

  /** Launches a session from engine session `origin` and brings it to a turn end with `text` as its output. */
  async function waitingSession(origin: string | null, text: string, multiTurn = true) {
    const session = await f.manager.launch({
      prompt: 'fix the tests',
      name: 'fixer',
      workdir: f.workdir,
      originChannel: 'telegram|42',
      originSessionId: origin,
      multiTurn,
    });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-1' }, { type: 'text', text }, ok);
    await router.idle();
    return session;
  }

  beforeEach(async () => {
    f = await openManagerFixture((path) => openTestStore(path));
    engine = new RecordingEngine();
    log = captureLogger();
    router = build(f);
    await router.start();
  });
  afterEach(async () => {
    await f.manager.stop();
    await router.stop();
    await f.close();
  });

  it('posts a waiting event to the engine session that launched the coding session', async () => {
    engine.addUserSession('eng-1', 1);
    engine.addUserSession('eng-2', 2);
    const session = await waitingSession('eng-1', 'Which file should I change?');
    assert.equal(engine.posts.length, 1);
    const post = engine.posts[0];
    assert.equal(post?.sessionId, 'eng-1');
    assert.equal(post?.origin, 'wake');
    assert.equal(post?.via, 'system');
    const text = post?.text ?? '';
    assert.match(
      text,
      new RegExp(`^🔔 Coding session "fixer" \\[${session.id}\\] is waiting for input: it asked a question\\.`),
    );
    assert.match(text, /Status: running, waiting \(question\)/);
    assert.match(text, /Last output:\nWhich file should I change\?/);
    assert.ok(text.includes(`claude_respond(session='${session.id}', message='...')`));
    assert.ok(text.includes(`claude_output(session='${session.id}', full=true)`));
    const stored = await new WakeEventStore(f.db).get(1);
    assert.deepEqual([stored?.status, stored?.via, stored?.targetSessionId], ['delivered', 'origin', 'eng-1']);
  });

  it('never wakes anyone for a session whose owner handles its events (the Linear pipeline, code_run)', async () => {
    engine.addUserSession('eng-1', 1);
    const owned = await f.manager.launch({
      prompt: 'work the issue',
      name: 'worker',
      workdir: f.workdir,
      originChannel: 'linear',
      owner: 'linear-pipeline',
    });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-o' }, { type: 'text', text: 'Done?' }, ok);
    await f.manager.kill(owned.id);
    const other = await f.manager.launch({
      prompt: 'p',
      name: 'other',
      workdir: f.workdir,
      originChannel: 'linear',
      owner: 'code_run',
    });
    await f.manager.stop();
    await router.announceInterrupted([other.id]);
    await router.idle();
    assert.deepEqual(engine.posts, [], 'no waiting, ended or interrupted event of an owned session');
    assert.equal(await new WakeEventStore(f.db).get(1), undefined, 'nothing stored either');
    assert.equal((await f.manager.get(owned.id)).spec.owner, 'linear-pipeline', 'the owner is kept with the session');
  });

  it('falls back to the most recent foreground user session, then to the heartbeat session', async () => {
    engine.addUserSession('older', 10);
    engine.addUserSession('newer', 20);
    engine.addSession('hb', { type: 'heartbeat' });
    await waitingSession('gone', 'done?');
    assert.equal(engine.posts[0]?.sessionId, 'newer');
    engine.removeSession('older');
    engine.removeSession('newer');
    await f.manager.kill('fixer');
    await router.idle();
    assert.equal(engine.posts[1]?.sessionId, 'hb');
    assert.deepEqual(
      (await new WakeEventStore(f.db).recent('delivered')).map((e) => [e.kind, e.via]),
      [
        ['ended', 'heartbeat'],
        ['waiting', 'most-recent-foreground'],
      ],
    );
  });

  it('counts and logs at warn an event no session can take', async () => {
    await waitingSession(null, 'anyone there?');
    assert.equal(engine.posts.length, 0);
    assert.equal(engine.unrouted.length, 2);
    const stats = await router.stats();
    assert.equal(stats.undelivered, 1);
    assert.equal(stats.pending, 0);
    assert.match(
      stats.recentUndelivered[0]?.error ?? '',
      /no origin session, no foreground user session, no heartbeat session, no heartbeat to run/,
    );
    assert.equal(log.find('warn', /^wake undelivered/).length, 1);
  });

  it('with the heartbeat wired, a wake with no session to go to runs the heartbeat now with the event in its prompt', async () => {
    await router.stop();
    router = build(f, { heartbeat: true });
    await router.start();
    await waitingSession(null, 'anyone there?');
    assert.equal(engine.posts.length, 1);
    assert.deepEqual(engine.posts[0]?.descriptor, { type: 'heartbeat' });
    assert.match(engine.posts[0]?.text ?? '', /\(wake\)[\s\S]*### Event 1 \(wake, .+\)\n\n🔔 Coding session "fixer"/);
    assert.equal((await router.stats()).undelivered, 0);
    assert.equal((await new WakeEventStore(f.db).get(1))?.via, 'heartbeat-run');
  });

  it('debounces waiting events per session: a repeat within the window is skipped, the first always goes', async () => {
    engine.addUserSession('eng-1', 1);
    const session = await waitingSession('eng-1', 'turn one done');
    await f.manager.send(session.id, 'next', { source: 'user' });
    f.clock.advance(4_000);
    await f.harness.last.emit({ type: 'text', text: 'turn two done' }, ok);
    await router.idle();
    assert.equal(engine.posts.length, 1);
    assert.equal((await router.stats()).debounced, 1);
    assert.equal(log.find('debug', /debounce window/).length, 1);
    await f.manager.send(session.id, 'again', { source: 'user' });
    f.clock.advance(1_000);
    await f.harness.last.emit({ type: 'text', text: 'turn three done' }, ok);
    await router.idle();
    assert.equal(engine.posts.length, 2);
    assert.match(engine.posts[1]?.text ?? '', /turn three done/);
  });

  it('announces completed, failed and killed sessions with status and tail', async () => {
    engine.addUserSession('eng-1', 1);
    await waitingSession('eng-1', 'All green.', false);
    assert.match(
      engine.posts[0]?.text ?? '',
      /^✅ Coding session "fixer" \[.+\] completed \(single turn finished\)\.\nStatus: completed · cost \$0\.0100/,
    );
    assert.match(
      engine.posts[0]?.text ?? '',
      /Last output:\nAll green\.\n\nFull output: claude_output\(session='.+', full=true\)$/,
    );

    await f.manager.launch({
      prompt: 'p',
      name: 'breaker',
      workdir: f.workdir,
      originChannel: 'cli',
      originSessionId: 'eng-1',
    });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b-2' },
      { type: 'turnEnd', outcome: { ok: false, reason: 'api_error', message: 'overloaded' }, costUsd: 0 },
    );
    await router.idle();
    assert.match(engine.posts[1]?.text ?? '', /^❌ Coding session "breaker" \[.+\] failed: overloaded\./);
    assert.match(engine.posts[1]?.text ?? '', /claude_resume\(session='.+', prompt='...'\)/);

    await f.manager.launch({
      prompt: 'p',
      name: 'victim',
      workdir: f.workdir,
      originChannel: 'cli',
      originSessionId: 'eng-1',
    });
    await f.manager.kill('victim');
    await router.idle();
    assert.match(engine.posts[2]?.text ?? '', /^⛔ Coding session "victim" \[.+\] was killed \(killed by user\)\./);
  });

  it('announces sessions interrupted by a daemon stop, and by a crash after the restart', async () => {
    engine.addUserSession('eng-1', 1);
    const stopped = await f.manager.launch({
      prompt: 'p',
      name: 'stopped',
      workdir: f.workdir,
      originChannel: 'cli',
      originSessionId: 'eng-1',
    });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-s' }, { type: 'text', text: 'half way' });
    await f.manager.stop();
    await router.idle();
    assert.match(
      engine.posts[0]?.text ?? '',
      new RegExp(
        `^⏸️ Coding session "stopped" \\[${stopped.id}\\] was interrupted when the daemon stopped \\(daemon stopped\\)`,
      ),
    );

    // A crash: the next daemon resumes it and dies; a third manager over the same files finds the session still
    // running and marks it interrupted.
    const next = await f.reopen();
    const crashed = await next.manager.resume('stopped', { prompt: 'continue' });
    await next.harness.last.emit(
      { type: 'started', backendSessionId: 'b-s' },
      { type: 'text', text: 'x'.repeat(2_000) },
    );
    await crashed.stored; // a killed process writes nothing more (over PostgreSQL's pool a write could land late)
    const g = await next.reopen();
    const ids = await g.manager.restore();
    assert.deepEqual(ids, [crashed.id]);
    const after = build(g);
    await after.announceInterrupted(ids);
    await after.announceInterrupted(ids);
    await after.start();
    await after.idle();
    assert.equal(engine.posts.length, 2, 'announced once');
    const text = engine.posts[1]?.text ?? '';
    assert.match(text, /was interrupted when the daemon stopped \(daemon restarted\)/);
    const tail = /Last output:\n([\s\S]*)\n\nFull output/.exec(text)?.[1] ?? '';
    assert.ok(tail.length <= 500 && tail.startsWith('…x'), `tail of ${tail.length} chars`);
    await after.stop();
    await g.close();
    await next.close();
  });

  it('keeps an event the engine could not take and delivers it later, in order, also across a restart', async () => {
    engine.addUserSession('eng-1', 1);
    engine.failWith = new Error('engine stopping');
    await waitingSession('eng-1', 'first');
    await f.manager.kill('fixer');
    await router.idle();
    assert.equal((await router.stats()).pending, 2);
    assert.equal(log.find('error', /stays queued and is retried/).length, 1);
    engine.failWith = null;
    f.clock.advance(f.config.wake.retryMs);
    await router.idle();
    assert.deepEqual(
      engine.posts.map((p) => p.text.split(' ')[0]),
      ['🔔', '⛔'],
    );

    // Left pending by a stop: a new router delivers it at start.
    engine.failWith = new Error('engine stopping');
    const later = await f.manager.launch({
      prompt: 'p',
      name: 'later',
      workdir: f.workdir,
      originChannel: 'cli',
      originSessionId: 'eng-1',
    });
    await f.manager.kill(later.id);
    await router.idle();
    await router.stop();
    engine.failWith = null;
    router = build(f);
    await router.start();
    assert.equal(engine.posts.length, 3);
    assert.match(engine.posts[2]?.text ?? '', /"later"/);
  });

  it('delivers a hook text now along the route with no origin, or says nothing could take it', async () => {
    assert.equal(await router.deliver('ping', 'hook'), null);
    engine.addUserSession('eng-9', 5);
    const delivery = await router.deliver('ping', 'hook');
    assert.deepEqual([delivery?.sessionId, delivery?.via], ['eng-9', 'most-recent-foreground']);
    assert.equal(engine.posts[0]?.origin, 'hook');
  });
});

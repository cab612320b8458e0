import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { managerPerTestOn, openManagerFixture } from '../../test/support/manager-on-store.ts';
import { openTestStore } from '../../test/support/test-store.ts';
import { AppError } from '../core/errors.ts';

const ok = { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 } as const;

async function expectAppError(fn: () => unknown, kind: string, pattern: RegExp): Promise<void> {
  await assert.rejects(
    async () => fn(),
    (error: unknown) => {
      assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`);
      assert.equal(error.kind, kind);
      assert.match(error.message, pattern);
      return true;
    },
  );
}

describe('SessionManager', () => {
  const { f, signals } = managerPerTestOn((path) => openTestStore(path));

  it('launches, names the session from the prompt and becomes running on the backend id', async () => {
    const session = await f.manager.launch({
      prompt: 'add a test for parse()',
      workdir: f.workdir,
      originChannel: 'cli',
    });
    assert.equal(session.name, 'add-test-parse');
    assert.equal(session.status, 'starting');
    assert.equal(f.harness.last.spec.prompt, 'add a test for parse()');
    assert.equal(f.harness.last.spec.maxBudgetUsd, 5);
    assert.equal(f.harness.last.spec.permissionMode, 'bypassPermissions');
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-1' });
    assert.equal(session.status, 'running');
    for (const ref of [session.id, session.name, 'b-1']) assert.equal((await f.manager.get(ref)).id, session.id);
  });

  it('finds a live session by the backend id it just reported, before the row write (and its lookup key) committed', async () => {
    const session = await f.manager.launch({ prompt: 'hold the row', workdir: f.workdir, originChannel: 'cli' });
    await session.stored;
    const held: (() => void)[] = [];
    const update = f.store.update.bind(f.store);
    f.store.update = (id, patch, within) =>
      new Promise<void>((resolve, reject) =>
        held.push(() => {
          update(id, patch, within).then(resolve, reject);
        }),
      );
    try {
      await f.harness.last.emit({ type: 'started', backendSessionId: 'b-held' });
      assert.ok(held.length > 0, 'the row write waits');
      assert.equal((await f.manager.get('b-held')).id, session.id);
      assert.equal((await f.manager.get(session.name)).backendSessionId, 'b-held');
    } finally {
      f.store.update = update;
      for (const go of held) go();
    }
    await session.stored;
  });

  it('a burst of launches of one workdir is admitted one per turn of the event loop', async () => {
    // Launches of one workdir share their HEAD read: when it resolves, every launch waiting on it could go at once.
    // Each admission after the first must start in a later turn, so I/O (a health check) is served in between.
    const turns: number[] = [];
    let turn = 0;
    let counting = true;
    const tick = (): void => {
      turn += 1;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const launched = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        f.manager.launchSoon({ prompt: `burst ${i}`, workdir: f.workdir, originChannel: 'cli' }).then((session) => {
          turns.push(turn);
          return session;
        }),
      ),
    );
    counting = false;
    assert.equal(new Set(launched.map((s) => s.id)).size, 4);
    for (let i = 1; i < turns.length; i += 1)
      assert.ok(
        (turns[i] ?? 0) > (turns[i - 1] ?? 0),
        `launch ${i} started in the same turn as the one before: ${turns.join(', ')}`,
      );
  });

  it('de-duplicates names with -2, -3', async () => {
    const names: string[] = [];
    for (let i = 0; i < 3; i += 1)
      names.push((await f.manager.launch({ prompt: 'fix flaky test', workdir: f.workdir, originChannel: 'cli' })).name);
    assert.deepEqual(names, ['fix-flaky-test', 'fix-flaky-test-2', 'fix-flaky-test-3']);
  });

  it('refuses a launch over maxSessions with an error naming the limit', async () => {
    for (let i = 0; i < 5; i += 1)
      await f.manager.launch({ prompt: `task ${i}`, workdir: f.workdir, originChannel: 'cli' });
    await expectAppError(
      () => f.manager.launch({ prompt: 'one more', workdir: f.workdir, originChannel: 'cli' }),
      'limit',
      /maxSessions.*5 of 5/,
    );
  });

  it('refuses a workdir outside the workspaces', async () => {
    await expectAppError(
      () => f.manager.launch({ prompt: 'x', workdir: '/', originChannel: 'cli' }),
      'invalid_input',
      /outside the configured workspaces/,
    );
    await expectAppError(
      () => f.manager.launch({ prompt: 'x', workdir: join(f.workdir, 'nope'), originChannel: 'cli' }),
      'invalid_input',
      /does not exist/,
    );
    // Relative to the daemon's own directory it names the workdir, but whoever asked cannot know that directory.
    await expectAppError(
      () => f.manager.launch({ prompt: 'x', workdir: relative(process.cwd(), f.workdir), originChannel: 'rpc' }),
      'invalid_input',
      /workdir: .* is a relative path; give an absolute path/,
    );
  });

  it('ends a multi-turn turn waiting for input, tells a question from a finished turn, and continues on send', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' }, { type: 'text', text: 'All tests pass.' }, ok);
    assert.equal(session.status, 'running');
    assert.equal(session.waitingFor, 'turn-end');
    await f.manager.send(session.name, 'now the docs', { source: 'user' });
    assert.deepEqual(run.sent, ['now the docs']);
    assert.equal(session.waitingFor, null);
    await run.emit({ type: 'text', text: 'Which file should I change?' }, ok);
    assert.equal(session.waitingFor, 'question');
    const waits = signals.filter((s) => s.type === 'waiting').map((s) => (s.type === 'waiting' ? s.reason : ''));
    assert.deepEqual(waits, ['turn-end', 'question']);
    assert.equal(session.record.costUsd, 0.02);
  });

  it('completes a single-turn session at its first turn end', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli', multiTurn: false });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, ok);
    assert.equal(session.status, 'completed');
    assert.ok(f.harness.last.ended);
    assert.ok(signals.some((s) => s.type === 'ended'));
  });

  it('fails on budget exhaustion and flags it', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      {
        type: 'turnEnd',
        outcome: { ok: false, reason: 'budget_exhausted', message: 'Reached maximum budget ($5)' },
        costUsd: 5,
      },
    );
    assert.equal(session.status, 'failed');
    assert.equal(session.record.budgetExhausted, true);
    assert.equal(session.record.error, 'Reached maximum budget ($5)');
    assert.deepEqual(
      signals.map((s) => s.type).filter((t) => t !== 'running'),
      ['launched', 'budgetExhausted', 'ended'],
    );
  });

  it('fails a session whose agent crashes mid-turn, keeping the error', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'text', text: 'working' },
      { type: 'exited', code: 3, error: 'agent process exited with code 3' },
    );
    assert.equal(session.status, 'failed');
    assert.match(session.record.error ?? '', /code 3/);
  });

  it('safety net fires once after 15 s of silence, never while a tool call runs', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    const run = f.harness.last;
    await run.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'tool', id: 't1', name: 'Bash', input: { command: 'npm test' } },
    );
    f.clock.advance(120_000);
    assert.equal(session.waitingFor, null, 'a running tool call must keep the safety net quiet');
    await run.emit({ type: 'toolResult', id: 't1', isError: false });
    f.clock.advance(14_999);
    assert.equal(session.waitingFor, null);
    f.clock.advance(1);
    assert.equal(session.waitingFor, 'stalled');
    f.clock.advance(60_000);
    assert.equal(signals.filter((s) => s.type === 'waiting').length, 1, 'guarded: fires once');
    // The agent was only slow: its turn end is still announced.
    await run.emit({ type: 'text', text: 'done' }, ok);
    assert.deepEqual(
      signals.filter((s) => s.type === 'waiting').map((s) => (s.type === 'waiting' ? s.reason : '')),
      ['stalled', 'turn-end'],
    );
  });

  it('warnings alone are not progress: an agent that only repeats one still trips the safety net', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' });
    for (let i = 0; i < 4; i += 1) {
      f.clock.advance(5_000);
      await run.emit({ type: 'warning', message: 'Reconnecting... waiting for network' });
    }
    assert.equal(session.waitingFor, 'stalled', '20 s of nothing but warnings is silence');
  });

  it('ends a session left idle for idleTimeoutMinutes, and says so', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, ok);
    f.clock.advance(30 * 60_000 - 1);
    assert.equal(session.status, 'running');
    f.clock.advance(1);
    assert.equal(session.status, 'killed');
    assert.match(session.record.endReason ?? '', /idle for 30 min/);
    assert.ok(f.harness.last.ended);
    assert.ok(signals.some((s) => s.type === 'ended'));
  });

  it('does not idle-kill a long first turn', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'tool', id: 't', name: 'Bash', input: {} },
    );
    f.clock.advance(2 * 60 * 60_000);
    assert.equal(session.status, 'running');
  });

  it('kills once; a second kill says it already ended', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    const record = await f.manager.kill(session.name);
    assert.equal(record.status, 'killed');
    assert.ok(f.harness.last.killed);
    await expectAppError(() => f.manager.kill(session.id), 'conflict', /already killed/);
    await expectAppError(() => f.manager.kill('nope'), 'not_found', /no session "nope"/);
  });

  it('answers a permission request with the next message', async () => {
    const session = await f.manager.launch({
      prompt: 'p',
      workdir: f.workdir,
      originChannel: 'cli',
      permissionMode: 'default',
    });
    const run = f.harness.last;
    await run.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'permission', requestId: 'r1', tool: 'Bash', input: { command: 'rm x' } },
    );
    assert.equal(session.waitingFor, 'permission');
    const { result } = await f.manager.send(session.id, 'yes', { source: 'user' });
    assert.equal(result, 'answered');
    assert.deepEqual(run.answers, [{ requestId: 'r1', decision: { allow: true } }]);
    await run.emit({ type: 'permission', requestId: 'r2', tool: 'Bash', input: {} });
    await f.manager.send(session.id, 'no, use git rm', { source: 'user' });
    assert.deepEqual(run.answers[1], { requestId: 'r2', decision: { allow: false, message: 'no, use git rm' } });
  });

  it('interrupts the current turn before sending when asked', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' });
    await f.manager.send(session.id, 'stop, do X', { source: 'user', interrupt: true });
    assert.equal(f.harness.last.interrupts, 1);
    assert.deepEqual(f.harness.last.sent, ['stop, do X']);
    await f.harness.last.emit({
      type: 'turnEnd',
      outcome: { ok: false, reason: 'interrupted', message: 'interrupted' },
      costUsd: 0,
    });
    assert.equal(session.status, 'running', 'an interrupted turn does not fail the session');
  });

  it('counts agent responds up to maxAutoResponds; a user respond resets the count', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' });
    for (let i = 0; i < 10; i += 1) await f.manager.send(session.id, `auto ${i}`, { source: 'agent' });
    await assert.rejects(f.manager.send(session.id, 'auto 11', { source: 'agent' }), /auto-respond limit reached.*10/);
    await f.manager.send(session.id, 'from the user', { source: 'user' });
    assert.equal(session.record.autoResponds, 0);
    await f.manager.send(session.id, 'auto again', { source: 'agent' });
  });

  it('refuses to send to a finished session, pointing at resume', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.manager.kill(session.id);
    await assert.rejects(f.manager.send(session.id, 'hi', { source: 'user' }), /is killed; resume it first/);
  });

  it('resumes in place with the backend id and keeps the output', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-9' }, { type: 'text', text: 'first output' }, ok);
    await f.manager.kill(session.id);
    const resumed = await f.manager.resume(session.name, { prompt: 'carry on' });
    assert.equal(resumed.id, session.id);
    assert.equal(f.harness.last.spec.resumeBackendId, 'b-9');
    assert.equal(f.harness.last.spec.prompt, 'carry on');
    assert.deepEqual(resumed.lastOutput(), ['first output']);
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-9' });
    assert.equal(resumed.status, 'running');
    const forked = (await f.manager.kill(session.id), await f.manager.resume('b-9', { fork: true }));
    assert.notEqual(forked.id, session.id);
    assert.equal(forked.name, `${session.name}-fork`);
    assert.equal(forked.record.resumedFrom, session.id);
    assert.equal(f.harness.last.spec.forkSession, true);
  });

  it('refuses fork on a harness that cannot fork', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli', harness: 'codex' });
    await f.codex.last.emit({ type: 'started', backendSessionId: 'thread-1' });
    await f.manager.kill(session.id);
    await expectAppError(
      () => f.manager.resume(session.id, { fork: true }),
      'invalid_input',
      /codex harness cannot fork/,
    );
  });

  it('survives a restart: interrupted, output kept, resumable, metrics intact', async () => {
    const session = await f.manager.launch({ prompt: 'long job', workdir: f.workdir, originChannel: 'telegram|42' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-7' }, { type: 'text', text: 'step one' }, ok);
    await f.manager.send(session.id, 'go on', { source: 'user' });
    await f.harness.last.emit({ type: 'text', text: 'step two' });
    // A killed process writes nothing more: its last row writes land before the restart (over PostgreSQL's pool they
    // could otherwise commit after the second manager marked the session interrupted).
    await session.stored;
    // A second manager over the same files, without stopping the first: what a SIGKILL leaves behind.
    const g = await f.reopen();
    try {
      assert.deepEqual(await g.manager.restore(), [session.id]);
      const record = await g.manager.get('b-7');
      assert.equal(record.status, 'interrupted');
      assert.equal(record.originChannel, 'telegram|42');
      assert.deepEqual(
        g.manager.outputBlocks(record).map((b) => b.text),
        ['step one', 'step two'],
      );
      assert.equal((await g.manager.stats()).sessionsByStatus.interrupted, 1);
      const resumed = await g.manager.resume(session.name);
      assert.equal(g.harness.last.spec.resumeBackendId, 'b-7');
      assert.equal(g.harness.last.spec.prompt, 'Continue where you left off.');
      assert.deepEqual(resumed.lastOutput(), ['step one', 'step two']);
    } finally {
      await g.close();
    }
  });

  it('evicts the oldest finished sessions beyond maxPersistedSessions, under all three keys', async () => {
    const g = await openManagerFixture((path) => openTestStore(path), { maxPersistedSessions: 2 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        const s = await g.manager.launch({ prompt: `job ${i}`, workdir: g.workdir, originChannel: 'cli' });
        await g.harness.last.emit({ type: 'started', backendSessionId: `backend-${i}` });
        g.clock.advance(1_000);
        await g.manager.kill(s.id);
        ids.push(s.id);
      }
      await g.manager.cleanup();
      assert.deepEqual(
        (await g.manager.list()).map((s) => s.name),
        ['job-3', 'job-2'],
      );
      for (const ref of [ids[0] as string, 'job-0', 'backend-0'])
        await assert.rejects(async () => g.manager.get(ref), /no session/);
      assert.equal(existsSync(join(g.home, 'logs', `${ids[0]}.jsonl`)), false);
      assert.equal((await g.manager.stats()).totalLaunched, 4, 'metrics outlive eviction');
    } finally {
      await g.close();
    }
  });

  it('signals launch, question, permission, messages and kill — each after its log record — with the command chat as via', async () => {
    const seen: { type: string; lastLogType: string | undefined }[] = [];
    f.manager.on((s) => {
      const log = f.logs.read(s.session.id);
      seen.push({ type: s.type, lastLogType: log[log.length - 1]?.type });
    });
    const session = await f.manager.launch({
      prompt: 'p',
      workdir: f.workdir,
      originChannel: 'telegram|42',
      via: 'telegram|42',
      permissionMode: 'default',
    });
    assert.equal(session.runStartedAt, f.clock.now());
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' }, { type: 'question', text: 'Which DB?' }, ok);
    await f.manager.send(session.id, 'postgres', { source: 'user', via: 'web|w1' });
    await run.emit({ type: 'permission', requestId: 'r1', tool: 'Bash', input: { command: 'rm x' } });
    await f.manager.send(session.id, 'yes', { source: 'agent' });
    await f.manager.kill(session.id, 'killed by user', { via: 'telegram|42' });
    const types = signals.map((s) => s.type).filter((t) => t !== 'running');
    assert.deepEqual(types, [
      'launched',
      'question',
      'waiting',
      'message',
      'permission',
      'waiting',
      'message',
      'ended',
    ]);
    const byType = (t: string) => signals.filter((s) => s.type === t);
    assert.deepEqual(
      byType('launched').map((s) => (s.type === 'launched' ? [s.kind, s.via] : [])),
      [['launch', 'telegram|42']],
    );
    assert.deepEqual(
      byType('question').map((s) => (s.type === 'question' ? s.text : '')),
      ['Which DB?'],
    );
    assert.deepEqual(
      byType('waiting').map((s) => (s.type === 'waiting' ? s.reason : '')),
      ['question', 'permission'],
    );
    assert.deepEqual(
      byType('message').map((s) => (s.type === 'message' ? [s.text, s.source, s.answered, s.via] : [])),
      [
        ['postgres', 'user', false, 'web|w1'],
        ['yes', 'agent', true, undefined],
      ],
    );
    assert.deepEqual(
      byType('ended').map((s) => (s.type === 'ended' ? s.via : '')),
      ['telegram|42'],
    );
    const logged: Record<string, string> = {
      launched: 'user',
      question: 'question',
      permission: 'permission',
      waiting: 'waiting',
      ended: 'status',
    };
    for (const { type, lastLogType } of seen.filter((x) => x.type in logged))
      assert.equal(lastLogType, logged[type], `${type} after its record`);
    assert.deepEqual(
      seen.filter((x) => x.type === 'message').map((x) => x.lastLogType),
      ['user', 'permissionAnswer'],
    );
  });

  it('announces a permission request and a turn end that follow a "stalled" alarm', async () => {
    const session = await f.manager.launch({
      prompt: 'p',
      workdir: f.workdir,
      originChannel: 'cli',
      permissionMode: 'default',
    });
    const run = f.harness.last;
    await run.emit({ type: 'started', backendSessionId: 'b' });
    f.clock.advance(15_000);
    assert.equal(session.waitingFor, 'stalled');
    await run.emit({ type: 'permission', requestId: 'r1', tool: 'Bash', input: {} });
    assert.equal(session.waitingFor, 'permission');
    await f.manager.send(session.id, 'yes', { source: 'user' });
    f.clock.advance(15_000);
    await run.emit(ok);
    const waits = signals.filter((s) => s.type === 'waiting').map((s) => (s.type === 'waiting' ? s.reason : ''));
    assert.deepEqual(waits, ['stalled', 'permission', 'stalled', 'turn-end']);
  });

  it('signals interrupted (not ended) for sessions stopped by a daemon shutdown', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' });
    await f.manager.stop();
    assert.equal(session.status, 'interrupted');
    assert.deepEqual(signals.map((s) => s.type).slice(-1), ['interrupted']);
    assert.ok(!signals.some((s) => s.type === 'ended'));
  });

  it('stop waits for every agent still running to exit, so nothing is written to a log once it resolves', async () => {
    const active = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    const activeRun = f.harness.last;
    await activeRun.emit({ type: 'started', backendSessionId: 'b-1' });
    const single = await f.manager.launch({ prompt: 'q', workdir: f.workdir, originChannel: 'cli', multiTurn: false });
    const singleRun = f.harness.last;
    await singleRun.emit({ type: 'started', backendSessionId: 'b-2' }, ok);
    assert.equal(single.status, 'completed');
    assert.ok(singleRun.ended && single.attached, 'the single turn is over but its agent has not exited yet');
    for (const run of [activeRun, singleRun]) {
      const kill = run.kill.bind(run);
      run.kill = () => void setTimeout(kill, 30); // a real agent takes a while to die after SIGTERM
    }
    await f.manager.stop();
    assert.ok(activeRun.killed && singleRun.killed, 'no agent outlives the stop');
    for (const session of [active, single]) {
      assert.equal(session.attached, false, `${session.name}: its exit was handled before stop resolved`);
      const records = readFileSync(join(f.home, 'logs', `${session.id}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string });
      assert.equal(
        records.at(-1)?.type,
        'exited',
        `${session.name}: the exit is the last record, written before stop resolved`,
      );
    }
    assert.equal(active.status, 'interrupted');
    assert.equal(single.status, 'completed', 'an ended session keeps its status');
  });

  it('refuses to launch or resume once stop has begun (an engine turn still running must not start an agent that outlives it)', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b-stop' });
    const stopping = f.manager.stop();
    await assert.rejects(
      async () => f.manager.launch({ prompt: 'late', workdir: f.workdir, originChannel: 'cli' }),
      /the daemon is stopping/,
    );
    await stopping;
    await assert.rejects(async () => f.manager.resume(session.id, { prompt: 'again' }), /the daemon is stopping/);
    assert.equal((await f.store.list()).length, 1, 'nothing was stored for the refused launch');
  });

  it('logs and signals a channel view change; markSeen only moves the seen mark', async () => {
    const session = await f.manager.launch({ prompt: 'p', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, { type: 'text', text: 'hello' });
    const before = f.manager.lastSeq(session.id);
    await f.manager.setView(await f.manager.get(session.id), 'web|w', true);
    assert.deepEqual((await f.manager.get(session.id)).foreground, { 'web|w': { on: true, seenSeq: before } });
    assert.deepEqual(f.logs.read(session.id).at(-1), {
      v: 1,
      seq: before + 1,
      ts: f.clock.now(),
      type: 'foreground',
      channel: 'web|w',
      on: true,
    });
    assert.deepEqual(
      signals.filter((s) => s.type === 'view').map((s) => (s.type === 'view' ? [s.channel, s.on] : [])),
      [['web|w', true]],
    );
    f.manager.markSeen(session.id, 'web|w', 2);
    f.manager.markSeen(session.id, 'other|x', 2);
    assert.deepEqual((await f.manager.get(session.id)).foreground, { 'web|w': { on: true, seenSeq: 2 } });
    assert.equal(f.manager.lastSeq(session.id), before + 1, 'no log record for markSeen');
  });

  it('computes metrics: cost per day, by status, average duration, most expensive', async () => {
    const a = await f.manager.launch({ prompt: 'cheap', workdir: f.workdir, originChannel: 'cli', multiTurn: false });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'a' });
    f.clock.advance(2_000);
    await f.harness.last.emit({ ...ok, costUsd: 0.5 });
    const b = await f.manager.launch({ prompt: 'pricey', workdir: f.workdir, originChannel: 'cli' });
    await f.harness.last.emit({ type: 'started', backendSessionId: 'b' }, { ...ok, costUsd: 2 });
    f.clock.advance(4_000);
    await f.manager.kill(b.id);
    const m = await f.manager.stats();
    assert.equal(a.status, 'completed');
    assert.equal(m.totalLaunched, 2);
    assert.equal(m.totalCostUsd, 2.5);
    assert.deepEqual(m.costPerDay, { '2026-01-01': 2.5 });
    assert.deepEqual(m.sessionsByStatus, { completed: 1, failed: 0, killed: 1, interrupted: 0, running: 0 });
    assert.equal(m.averageDurationMs, 3_000);
    assert.deepEqual(m.mostExpensive, { id: b.id, name: 'pricey', costUsd: 2, prompt: 'pricey' });
  });
});

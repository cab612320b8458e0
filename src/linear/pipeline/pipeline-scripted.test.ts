// The pipeline with scripted harnesses, for what needs exact control of the agent's events: tool timeouts, the
// auditor's permission requests, prompts forwarded to a running worker, the monitor, slots and queues.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { PipelineFixture, PipelineFixtureOptions } from '../../../test/support/pipeline-fixture.ts';
import { pipelineFixture } from '../../../test/support/pipeline-fixture.ts';
import type { ScriptedRun } from '../../../test/support/scripted-harness.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import type { HarnessEvent } from '../../coding/harness.ts';
import { AppError } from '../../core/errors.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { ActivityContent } from '../api/types.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import { AUDITOR_DENIAL } from './phases.ts';
import { createPipeline } from './pipeline.ts';

const ok: HarnessEvent = { type: 'turnEnd', outcome: { ok: true }, costUsd: 0.01 };
const PASS = '{"pass": true, "criteria": ["ok"], "gaps": [], "testResults": "1 passed"}';
const FAIL = '{"pass": false, "criteria": [], "gaps": ["missing docs"], "testResults": "0 passed"}';

let fixtures: PipelineFixture[] = [];
async function setup(options: PipelineFixtureOptions = {}): Promise<PipelineFixture> {
  const f = await pipelineFixture({ scripted: true, prompts: null, ...options });
  fixtures.push(f);
  return f;
}
afterEach(async () => {
  for (const f of fixtures) await f.close();
  fixtures = [];
});

/** Waits for the n-th run (1-based) of a scripted harness and returns it. */
async function nthRun(
  f: PipelineFixture,
  n: number,
  harness: 'claude' | 'codex' | 'gemini' = 'claude',
): Promise<ScriptedRun> {
  await waitFor(`${harness} run ${n}`, () => f.scripted(harness).runs.length >= n);
  await f.pipeline.idle();
  return f.scripted(harness).runs[n - 1] as ScriptedRun;
}

/** Plays one successful turn that says `text`. */
async function finish(run: ScriptedRun, text: string): Promise<void> {
  await run.emit({ type: 'started', backendSessionId: `b-${run.spec.sessionId}` }, { type: 'text', text }, ok);
}

function ofType<T extends ActivityContent['type']>(
  list: ActivityContent[],
  type: T,
): Extract<ActivityContent, { type: T }>[] {
  return list.filter((a): a is Extract<ActivityContent, { type: T }> => a.type === type);
}

describe('Linear pipeline (scripted agents)', { timeout: 60_000 }, () => {
  it('chooses harness and model from a label and runs the auditor read-only', async () => {
    const f = await setup({
      overrides: {
        'linear.pipeline.audit': { harness: 'claude', model: 'sonnet', allowedTools: ['Bash(npm test:*)'] },
      },
    });
    f.linear.addIssue({ identifier: 'ENG-1', estimate: 8, labels: [{ id: 'l', name: 'harness:codex' }] });
    await f.pipeline.dispatch('ENG-1', { agentSessionId: 'as-1' });
    const worker = await nthRun(f, 1, 'codex');
    assert.deepEqual([worker.spec.model, worker.spec.permissionMode], [undefined, 'bypassPermissions']);
    await finish(worker, 'done it');
    const audit = await nthRun(f, 1, 'claude');
    assert.deepEqual(
      [audit.spec.model, audit.spec.permissionMode, audit.spec.allowedTools],
      ['sonnet', 'plan', ['Bash(npm test:*)']],
    );
    assert.match(audit.spec.prompt, /done it/, 'the auditor sees the worker report');
    assert.match(audit.spec.systemPrompt ?? '', /Never edit, create or delete files/);
    // The auditor asks to edit: denied, never allowed.
    await audit.emit(
      { type: 'started', backendSessionId: 'b-audit' },
      { type: 'permission', requestId: 'r1', tool: 'Edit', input: { file_path: 'a.ts' } },
    );
    await waitFor('the permission answer', () => audit.answers.length === 1);
    assert.deepEqual(audit.answers[0], { requestId: 'r1', decision: { allow: false, message: AUDITOR_DENIAL } });
    await audit.emit({ type: 'text', text: PASS }, ok);
    await waitFor('done', async () => (await f.pipeline.get('ENG-1'))?.status === 'done');
  });

  it('kills a tool call that runs past the tool timeout (a silent tool is not inactivity)', async () => {
    const f = await setup({ overrides: { 'linear.pipeline.watchdog': { inactivitySec: 60, toolTimeoutSec: 300 } } });
    f.linear.addIssue({ identifier: 'ENG-2' });
    await f.pipeline.dispatch('ENG-2', { agentSessionId: 'as-2' });
    const run = await nthRun(f, 1);
    await run.emit(
      { type: 'started', backendSessionId: 'b' },
      { type: 'tool', id: 't1', name: 'Bash', input: { command: 'npm test' } },
    );
    f.clock.advance(299_000);
    assert.equal(run.killed, false);
    f.clock.advance(1_000);
    await f.pipeline.idle(); // the trip stores its end cause, then kills
    assert.equal(run.killed, true);
    const retry = await nthRun(f, 2);
    assert.equal(retry.spec.prompt, run.spec.prompt, 'the retry is the same phase with the same prompt');
    const d = (await f.pipeline.get('ENG-2')) as DispatchRecord;
    const kill = readFileSync(join(d.worktreePath as string, '.switchboard', 'log.jsonl'), 'utf8')
      .split('\n')
      .find((l) => l.includes('watchdog-kill'));
    assert.match(kill ?? '', /tool call Bash running for 300 s/);
    const actions = ofType(f.linear.activitiesOf('as-2'), 'action');
    assert.deepEqual(actions[0], { type: 'action', action: 'Running Bash', parameter: 'npm test' });
  });

  it('takes watchdog limits from the agent profile', async () => {
    const f = await setup({
      overrides: { 'linear.pipeline.profiles': { quick: { watchdog: { inactivitySec: 10 } } } },
    });
    f.linear.addIssue({ identifier: 'ENG-3' });
    await assert.rejects(
      f.pipeline.dispatch('ENG-3', { profile: 'nope', agentSessionId: 'as-x' }),
      /profile: no agent profile "nope"/,
    );
    assert.match(
      ofType(f.linear.activitiesOf('as-x'), 'error')[0]?.body ?? '',
      /Could not start work on this issue: profile: no agent profile/,
    );
    await f.pipeline.dispatch('ENG-3', { agentSessionId: 'as-3', profile: 'quick' });
    const run = await nthRun(f, 1);
    await run.emit({ type: 'started', backendSessionId: 'b' });
    f.clock.advance(10_000);
    await f.pipeline.idle(); // the trip stores its end cause, then kills
    assert.equal(run.killed, true);
  });

  it('forwards a prompt to the running worker (interrupting its turn) and keeps it for later prompts', async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'ENG-4' });
    await f.pipeline.dispatch('ENG-4', { agentSessionId: 'as-4', prompt: 'start with the parser' });
    const worker = await nthRun(f, 1);
    assert.match(worker.spec.prompt, /- start with the parser/);
    await worker.emit({ type: 'started', backendSessionId: 'b' }, { type: 'text', text: 'working' });
    const result = await f.pipeline.onPrompt('as-4', 'also update the docs');
    assert.equal(result.outcome, 'forwarded');
    assert.equal(worker.interrupts, 1);
    assert.deepEqual(worker.sent, ['also update the docs']);
    await worker.emit({
      type: 'turnEnd',
      outcome: { ok: false, reason: 'interrupted', message: 'interrupted' },
      costUsd: 0,
    });
    await worker.emit({ type: 'text', text: 'docs updated' }, ok);
    const audit = await nthRun(f, 2);
    assert.match(audit.spec.prompt, /- start with the parser\n- also update the docs/);
    assert.match(audit.spec.prompt, /docs updated/);
    const noted = await f.pipeline.onPrompt('as-4', 'and the changelog');
    assert.equal(noted.outcome, 'noted');
    assert.equal((await f.pipeline.onPrompt('as-unknown', 'x')).outcome, 'unknown');
  });

  it('caps worker-N.md at 8 KB, keeping the tail', async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'ENG-5' });
    await f.pipeline.dispatch('ENG-5', { agentSessionId: 'as-5' });
    const worker = await nthRun(f, 1);
    await finish(worker, `${'x'.repeat(20_000)}\nTHE END`);
    await nthRun(f, 2);
    const d = (await f.pipeline.get('ENG-5')) as DispatchRecord;
    const out = readFileSync(join(d.worktreePath as string, '.switchboard', 'worker-1.md'));
    assert.ok(out.length <= 8_192, `${out.length} bytes`);
    assert.ok(out.toString().endsWith('THE END'));
  });

  it('queues beyond maxConcurrent and starts the next when a slot frees up (FIFO)', async () => {
    const f = await setup({ overrides: { 'linear.pipeline.maxConcurrent': 2 } });
    for (const id of ['Q-1', 'Q-2', 'Q-3', 'Q-4']) f.linear.addIssue({ identifier: id });
    const results = [];
    for (const id of ['Q-1', 'Q-2', 'Q-3', 'Q-4'])
      results.push(await f.pipeline.dispatch(id, { agentSessionId: `as-${id}` }));
    assert.deepEqual(
      results.map((r) => (r.outcome === 'queued' ? `queued ${r.position}` : r.outcome)),
      ['started', 'started', 'queued 1', 'queued 2'],
    );
    assert.match(ofType(f.linear.activitiesOf('as-Q-3'), 'thought')[1]?.body ?? '', /Queued \(position 1\)/);
    await nthRun(f, 2);
    assert.equal(f.scripted('claude').runs.length, 2);
    await f.pipeline.onStop('as-Q-1', 'stop:t1');
    const third = await nthRun(f, 3);
    assert.match(third.spec.prompt, /Q-3/);
    assert.deepEqual(
      (await f.pipeline.list()).map((d) => d.status),
      ['stopped', 'working', 'working', 'queued'],
    );
  });

  it('waits for a free coding-session slot when the session pool is full', async () => {
    const f = await setup({ overrides: { maxSessions: 1 } });
    f.linear.addIssue({ identifier: 'S-1' });
    f.linear.addIssue({ identifier: 'S-2' });
    await f.pipeline.dispatch('S-1', { agentSessionId: 'as-s1' });
    const w1 = await nthRun(f, 1);
    await f.pipeline.dispatch('S-2', { agentSessionId: 'as-s2' });
    await f.pipeline.idle();
    assert.equal(f.scripted('claude').runs.length, 1);
    f.clock.advance(3_000); // the coalescing window of the activity stream
    const thoughts = () =>
      ofType(f.linear.activitiesOf('as-s2'), 'thought')
        .map((t) => t.body)
        .join('\n');
    await waitFor('the waiting thought', () =>
      /Waiting for a free coding-session slot to start the worker/.test(thoughts()),
    );
    await finish(w1, 'done');
    // S-1's auditor and S-2's worker compete for the one slot; both eventually run.
    const second = await nthRun(f, 2);
    await finish(second, second.spec.permissionMode === 'plan' ? PASS : 'done');
    const third = await nthRun(f, 3);
    await finish(third, third.spec.permissionMode === 'plan' ? PASS : 'done');
    const fourth = await nthRun(f, 4);
    await finish(fourth, fourth.spec.permissionMode === 'plan' ? PASS : 'done');
    await waitFor('both done', async () => (await f.pipeline.list()).every((d) => d.status === 'done'));
  });

  it('monitor: stale dispatches become stuck (told), lost phases are recovered, old finished ones pruned', async () => {
    // Monitor passes are run by hand here (the periodic one is pushed far out); the watchdog and the sessions' own
    // idle timeout are generous, so only the monitor can notice the silent worker.
    const f = await setup({
      overrides: {
        'linear.pipeline.watchdog': { inactivitySec: 1_000_000, maxTotalSec: 100_000_000 },
        'linear.pipeline.monitorIntervalSec': 100_000_000,
        idleTimeoutMinutes: 100_000,
      },
    });
    f.linear.addIssue({ identifier: 'M-1' });
    f.linear.addIssue({ identifier: 'M-2' });
    f.linear.addIssue({ identifier: 'M-3' });
    await f.pipeline.dispatch('M-1', { agentSessionId: 'as-m1' });
    const m1 = await nthRun(f, 1);
    await m1.emit({ type: 'started', backendSessionId: 'b1' });
    // M-2: its worker finished while nobody listened (as after a crash between the end and the audit start).
    await f.pipeline.dispatch('M-2', { agentSessionId: 'as-m2' });
    const m2 = await nthRun(f, 2);
    await f.pipeline.stop();
    await finish(m2, 'finished unseen');
    await f.pipeline.start();
    await f.pipeline.idle();
    const audit = await nthRun(f, 3);
    assert.equal(audit.spec.permissionMode, 'plan', 'restart found the finished worker and started its audit');
    await audit.emit({ type: 'started', backendSessionId: 'b-audit' });
    // M-3 finished long ago.
    await f.pipeline.dispatch('M-3', { agentSessionId: 'as-m3' });
    await f.pipeline.onStop('as-m3', 'stop:t2');
    // Two hours pass; M-1's worker stays silent (the watchdog is generous here), M-2's auditor keeps talking.
    for (let i = 0; i < 25; i += 1) {
      f.clock.advance(300_000);
      await audit.emit({ type: 'text', text: `still checking ${i}` });
    }
    await f.pipeline.idle();
    const report = await f.pipeline.monitor();
    assert.deepEqual(report.stale, ['M-1']);
    assert.equal((await f.pipeline.get('M-1'))?.status, 'stuck');
    assert.equal(m1.killed, true);
    assert.match(ofType(f.linear.activitiesOf('as-m1'), 'error')[0]?.body ?? '', /no activity for 2 h/);
    assert.equal(f.notifier.texts.length, 1);
    assert.equal((await f.pipeline.get('M-2'))?.status, 'auditing');
    f.clock.advance(8 * 24 * 3_600_000);
    const later = await f.pipeline.monitor();
    assert.ok(later.pruned >= 2, `pruned ${later.pruned}`);
    assert.equal(await f.pipeline.get('M-3'), null);
  });

  it('monitor: a worker that finished unheard gets its audit; an audit that never started is launched', async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'R-1' });
    f.linear.addIssue({ identifier: 'R-2' });
    await f.pipeline.dispatch('R-1', { agentSessionId: 'as-r1' });
    await f.pipeline.dispatch('R-2', { agentSessionId: 'as-r2' });
    const [w1, w2] = [await nthRun(f, 1), await nthRun(f, 2)];
    const byPrompt = (id: string) => (w1.spec.prompt.includes(id) ? w1 : w2);
    await f.pipeline.stop(); // nobody listens to the sessions any more
    // its worker finishes unheard. R-2: its worker is gone and the status moved on, but no audit was launched
    // (a crash between the status change and the launch).
    await finish(byPrompt('R-1'), 'finished unheard');
    await byPrompt('R-2').emit({ type: 'started', backendSessionId: 'b2' }, { type: 'exited', code: 0 });
    const r2 = (await f.pipeline.get('R-2')) as DispatchRecord;
    assert.ok(await transitionDispatch(f.dispatches, r2.id, 'working', 'auditing', f.clock.now(), { attempt: 1 }));
    const monitor = createPipeline(f.deps); // a pipeline that never saw those ends; only its monitor runs
    const report = await monitor.monitor();
    assert.deepEqual(report.reconciled.sort(), ['R-1', 'R-2']);
    const audits = f.scripted('claude').runs.slice(2);
    assert.equal(audits.length, 2);
    assert.ok(audits.every((r) => r.spec.permissionMode === 'plan'));
    assert.ok(audits.some((r) => /finished unheard/.test(r.spec.prompt)));
    assert.deepEqual((await monitor.monitor()).reconciled, [], 'nothing doubles on the next pass');
    assert.equal(f.scripted('claude').runs.length, 4);
    await monitor.stop();
  });

  it('after a crash mid-audit, re-runs the audit in a new read-only session (the interrupted one is not resumed)', async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'A-1' });
    await f.pipeline.dispatch('A-1', { agentSessionId: 'as-a1' });
    await finish(await nthRun(f, 1), 'work done');
    const audit = await nthRun(f, 2);
    await audit.emit({ type: 'started', backendSessionId: 'b-audit-1' }, { type: 'text', text: 'halfway' });
    const d = (await f.pipeline.get('A-1')) as DispatchRecord;
    const interrupted = (await f.sessionsOf(d.id))[1]?.id as string;
    const g = await f.crash();
    fixtures.push(g);
    const rerun = await nthRun(g, 1);
    assert.equal(rerun.spec.permissionMode, 'plan');
    assert.equal(rerun.spec.resumeBackendId, undefined);
    assert.match(rerun.spec.prompt, /work done/);
    await finish(rerun, PASS);
    await waitFor('done', async () => (await g.pipeline.get('A-1'))?.status === 'done');
    assert.equal((await g.manager.get(interrupted)).status, 'interrupted');
    assert.deepEqual(
      (await g.sessionsOf(d.id)).map((s) => s.phase),
      ['worker', 'audit', 'audit'],
    );
  });

  it('marks a dispatch stuck with a clear message when prompts.yaml is invalid', async () => {
    const f = await setup({ prompts: 'worker:\n  task: [not, a, string]\n' });
    f.linear.addIssue({ identifier: 'P-1' });
    await f.pipeline.dispatch('P-1', { agentSessionId: 'as-p1' });
    await waitFor('stuck', async () => (await f.pipeline.get('P-1'))?.status === 'stuck');
    await f.pipeline.idle();
    assert.match((await f.pipeline.get('P-1'))?.lastError ?? '', /invalid prompts: .*prompts\.yaml: worker\.task/);
    assert.equal(f.scripted('claude').runs.length, 0);
  });

  it('refuses an issue whose team has no repository, naming the config key', async () => {
    const f = await setup({
      overrides: { 'linear.pipeline.repo': undefined, 'linear.pipeline.teamRepos': { OTHER: '/tmp' } },
    });
    f.linear.addIssue({ identifier: 'NR-1' });
    await assert.rejects(
      f.pipeline.dispatch('NR-1', { agentSessionId: 'as-nr' }),
      (e: unknown) => e instanceof AppError && e.field === 'linear.pipeline.repo',
    );
    assert.equal((await f.pipeline.list()).length, 0);
    await assert.rejects(f.pipeline.dispatch('NOPE-1', { agentSessionId: 'as-nr' }), /Entity not found/);
    assert.equal(ofType(f.linear.activitiesOf('as-nr'), 'error').length, 2);
  });

  it('uses prompts.yaml from the repository for the worker', async () => {
    const f = await setup({
      prompts: 'worker:\n  task: "Custom task for {{identifier}}: {{description}}"\ntiers:\n  junior: "Tiny job."\n',
    });
    f.linear.addIssue({ identifier: 'P-2', description: 'Fix {{it}}' });
    await f.pipeline.dispatch('P-2', { agentSessionId: 'as-p2' });
    const run = await nthRun(f, 1);
    assert.equal(run.spec.prompt, 'Custom task for P-2: Fix { {it}}');
    assert.match(run.spec.systemPrompt ?? '', /Tiny job\.$/);
  });

  it('reports with comments when there is no agent session, one comment per outcome', async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'C-1' });
    f.linear.failures.set('createAgentSessionOnIssue', [
      new (await import('../api/types.ts')).LinearApiError('server', 'boom'),
    ]);
    await f.pipeline.dispatch('C-1');
    await finish(await nthRun(f, 1), 'did it');
    await finish(await nthRun(f, 2), FAIL.replace('false', 'true'));
    await waitFor('done', async () => (await f.pipeline.get('C-1'))?.status === 'done');
    await f.pipeline.idle();
    assert.equal(f.linear.comments.length, 1);
    assert.match(f.linear.comments[0]?.body ?? '', /C-1 is done/);
    assert.equal(f.linear.activities.length, 0);
  });

  it('writes the repository exclude once', async () => {
    const f = await setup();
    mkdirSync(join(f.repo, '.switchboard'), { recursive: true });
    writeFileSync(join(f.repo, '.switchboard', 'notes.txt'), 'x');
    f.linear.addIssue({ identifier: 'X-1' });
    await f.pipeline.dispatch('X-1', { agentSessionId: 'as-x' });
    await nthRun(f, 1);
    const exclude = readFileSync(join(f.repo, '.git', 'info', 'exclude'), 'utf8');
    assert.equal(exclude.split('\n').filter((l) => l === '.switchboard/*').length, 1);
  });
});

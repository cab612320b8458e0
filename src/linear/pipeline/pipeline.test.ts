// End to end: the pipeline over real child processes (fake-claude / fake-gemini through the real harnesses), a real
// git repository, SQLite and session logs in a temp dir, and the in-memory LinearApi. Audits replay captured verdicts
// chosen by team key and attempt (see REPLAY_PROMPTS).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { gitSync } from '../../../test/support/git-repo.ts';
import type { PipelineFixture, PipelineFixtureOptions } from '../../../test/support/pipeline-fixture.ts';
import { pipelineFixture } from '../../../test/support/pipeline-fixture.ts';
import { waitFor } from '../../../test/support/wait-for.ts';
import type { DispatchRecord, DispatchStatus } from '../../store/linear-dispatch-types.ts';
import type { ActivityContent } from '../api/types.ts';

const TIMEOUT = 90_000;

let fixtures: PipelineFixture[] = [];
async function setup(options: PipelineFixtureOptions = {}): Promise<PipelineFixture> {
  const f = await pipelineFixture(options);
  fixtures.push(f);
  return f;
}
afterEach(async () => {
  for (const f of fixtures) await f.close();
  fixtures = [];
});

async function until(f: PipelineFixture, issue: string, status: DispatchStatus): Promise<DispatchRecord> {
  await waitFor(
    `${issue} to be ${status} (is ${(await f.pipeline.get(issue))?.status})`,
    async () => (await f.pipeline.get(issue))?.status === status,
  );
  await f.pipeline.idle();
  return (await f.pipeline.get(issue)) as DispatchRecord;
}

function ofType<T extends ActivityContent['type']>(
  list: ActivityContent[],
  type: T,
): Extract<ActivityContent, { type: T }>[] {
  return list.filter((a): a is Extract<ActivityContent, { type: T }> => a.type === type);
}

function artifact(d: DispatchRecord, name: string): string {
  return readFileSync(join(d.worktreePath as string, '.switchboard', name), 'utf8');
}

function logEvents(d: DispatchRecord): { type: string; [k: string]: unknown }[] {
  return artifact(d, 'log.jsonl')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string });
}

/** Value of `--flag value` or `--flag=value` in an argv. */
function flagOf(argv: string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === name) return argv[i + 1];
    if (argv[i]?.startsWith(`${name}=`)) return argv[i]?.slice(name.length + 1);
  }
  return undefined;
}

describe('Linear pipeline end to end', { timeout: TIMEOUT }, () => {
  it('assignment → tiered worker → read-only audit → pass: one response, issue Done, artifacts written', async () => {
    const f = await setup();
    f.linear.addIssue({
      identifier: 'OK-1',
      title: 'Add a greeting',
      description: 'Add a greeting to the README.',
      estimate: 1,
      labels: [{ id: 'l', name: 'tier:senior' }],
    });
    const result = await f.pipeline.dispatch('OK-1');
    assert.equal(result.outcome, 'started');
    const d = await until(f, 'OK-1', 'done');

    // An agent session was created for the assignment, and the first thing it got was a thought.
    assert.equal(f.linear.createdAgentSessions.length, 1);
    const agentSessionId = f.linear.createdAgentSessions[0]?.id as string;
    assert.equal(d.agentSessionId, agentSessionId);
    const activities = f.linear.activitiesOf(agentSessionId);
    assert.equal(activities[0]?.type, 'thought');
    assert.match(
      (activities[0] as { body: string }).body,
      /Picked up OK-1: tier senior \(label tier:senior\) → claude opus/,
    );
    assert.ok(
      ofType(activities, 'thought').some((t) => t.body.includes('FAKE CLAUDE REPLY')),
      'worker output streamed as a thought',
    );
    const responses = ofType(activities, 'response');
    assert.equal(responses.length, 1, 'exactly one response');
    assert.match(responses[0]?.body ?? '', /OK-1 is done[\s\S]*the greeting is added[\s\S]*3 passed, 0 failed/);
    assert.equal(ofType(activities, 'error').length, 0);
    assert.equal(f.linear.comments.length, 0, 'no second summary as a comment');
    assert.equal(f.linear.issue('OK-1').state?.name, 'Done');
    assert.deepEqual(f.notifier.texts, []);

    // The tier really chose the model; the worker could edit, the auditor ran in plan mode in the same worktree.
    const [worker, audit] = await f.sessionsOf(d.id);
    assert.equal(worker?.phase, 'worker');
    assert.equal(audit?.phase, 'audit');
    assert.equal(worker?.model, 'opus');
    assert.equal(worker?.workdir, d.worktreePath);
    assert.equal(audit?.spec.permissionMode, 'plan');
    // The agent session links to the live view of the coding session on the web page, for each phase.
    const links = f.linear.callsOf('updateAgentSession') as [string, { externalUrls: { url: string }[] }][];
    assert.deepEqual(
      links.map(([id, input]) => [id, input.externalUrls[0]?.url]),
      [worker, audit].map((s) => [agentSessionId, `http://127.0.0.1:${f.config.gateway.port}/#session=${s?.id}`]),
    );
    const claudeRuns = f.invocations().filter((i) => i.harness === 'claude');
    assert.equal(claudeRuns.length, 2);
    assert.equal(flagOf(claudeRuns[0]?.argv ?? [], '--model'), 'opus');
    assert.equal(flagOf(claudeRuns[0]?.argv ?? [], '--permission-mode'), 'bypassPermissions');
    assert.equal(flagOf(claudeRuns[1]?.argv ?? [], '--permission-mode'), 'plan');
    assert.equal(claudeRuns[1]?.cwd, d.worktreePath);

    // The worktree is on Linear's branch and the artifacts are there but invisible to git.
    assert.equal(gitSync(d.worktreePath as string, 'branch', '--show-current'), 'agent/ok-1');
    const manifest = JSON.parse(artifact(d, 'manifest.json'));
    assert.equal(manifest.status, 'done');
    assert.equal(manifest.tier, 'senior');
    assert.equal(manifest.model, 'opus');
    assert.equal(manifest.issue.identifier, 'OK-1');
    assert.match(artifact(d, 'worker-1.md'), /FAKE CLAUDE REPLY/);
    assert.match(artifact(d, 'plan.md'), /Add a greeting to the README\./);
    assert.equal(JSON.parse(artifact(d, 'audit-1.json')).pass, true);
    assert.match(artifact(d, 'summary.md'), /OK-1 is done/);
    const events = logEvents(d).map((e) => e.type);
    for (const e of [
      'dispatched',
      'worker-started',
      'worker-ended',
      'audit-started',
      'audit-ended',
      'done',
      'issue-completed',
    ])
      assert.ok(events.includes(e), e);
    assert.equal(gitSync(d.worktreePath as string, 'status', '--porcelain'), '');
    assert.equal(gitSync(f.repo, 'status', '--porcelain', '--untracked-files=all'), '?? .switchboard/prompts.yaml');
  });

  it("fail then pass: the worker is re-spawned with the auditor's gaps", async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'RW-1', title: 'Add a greeting', description: 'Add a greeting and test it.' });
    await f.pipeline.dispatch('RW-1', { agentSessionId: 'as-rw' });
    const d = await until(f, 'RW-1', 'done');
    assert.equal(d.attempt, 2);
    const sessions = await f.sessionsOf(d.id);
    assert.deepEqual(
      sessions.map((s) => `${s.phase}-${s.attempt}`),
      ['worker-1', 'audit-1', 'worker-2', 'audit-2'],
    );
    assert.doesNotMatch(sessions[0]?.prompt ?? '', /Rework/);
    const second = sessions[2]?.prompt ?? '';
    assert.match(second, /## Rework \(attempt 2 of 3\)/);
    assert.match(second, /- no test covers the greeting\n- the README is not updated/);
    assert.equal(JSON.parse(artifact(d, 'audit-1.json')).pass, false);
    assert.equal(JSON.parse(artifact(d, 'audit-2.json')).pass, true);
    assert.ok(existsSync(join(d.worktreePath as string, '.switchboard', 'worker-2.md')));
    const thoughts = ofType(f.linear.activitiesOf('as-rw'), 'thought').map((t) => t.body);
    assert.ok(
      thoughts.some((t) =>
        /The audit of attempt 1 failed[\s\S]*no test covers the greeting[\s\S]*attempt 2 of 3/.test(t),
      ),
    );
    assert.equal(ofType(f.linear.activitiesOf('as-rw'), 'response').length, 1);
    assert.deepEqual(d.context.lastGaps, []);
  });

  it('fail up to maxAttempts: stuck, told in Linear and on the chat channel, issue left open', async () => {
    const f = await setup({ overrides: { 'linear.pipeline.maxAttempts': 2 } });
    f.linear.addIssue({ identifier: 'NO-1', title: 'Impossible', description: 'Make it perfect.' });
    await f.pipeline.dispatch('NO-1', { agentSessionId: 'as-no' });
    const d = await until(f, 'NO-1', 'stuck');
    assert.equal(d.attempt, 2);
    assert.deepEqual(
      (await f.sessionsOf(d.id)).map((s) => `${s.phase}-${s.attempt}`),
      ['worker-1', 'audit-1', 'worker-2', 'audit-2'],
    );
    const errors = ofType(f.linear.activitiesOf('as-no'), 'error');
    assert.equal(errors.length, 1);
    assert.match(
      errors[0]?.body ?? '',
      /NO-1 is stuck: the audit failed 2 times \(maxAttempts 2\)[\s\S]*no test covers the greeting/,
    );
    assert.equal(ofType(f.linear.activitiesOf('as-no'), 'response').length, 0);
    assert.equal(f.notifier.texts.length, 1);
    assert.match(f.notifier.texts[0] ?? '', /NO-1 \(Impossible\) is stuck/);
    assert.equal(f.linear.issue('NO-1').state?.name, 'Todo');
    assert.ok(logEvents(d).some((e) => e.type === 'stuck'));
    assert.equal(JSON.parse(artifact(d, 'manifest.json')).status, 'stuck');
  });

  it('watchdog: a hung worker is killed and retried once; the second kill marks the dispatch stuck', async () => {
    const f = await setup({ overrides: { 'linear.pipeline.watchdog.inactivitySec': 60 } });
    f.linear.addIssue({ identifier: 'OK-2', title: 'Hangs', description: 'Do it. [[hang]]' });
    await f.pipeline.dispatch('OK-2', { agentSessionId: 'as-hang' });
    const workers = async () =>
      (await f.sessionsOf((await f.pipeline.get('OK-2'))?.id ?? '')).filter((s) => s.phase === 'worker');
    for (const n of [1, 2]) {
      await waitFor(
        `worker try ${n} running`,
        async () => (await workers()).length === n && (await workers())[n - 1]?.status === 'running',
      );
      f.clock.advance(59_000);
      await f.pipeline.idle();
      assert.equal((await workers())[n - 1]?.status, 'running', 'not killed before the limit');
      f.clock.advance(1_000);
      await waitFor(`worker try ${n} killed`, async () => (await workers())[n - 1]?.status === 'killed');
    }
    const d = await until(f, 'OK-2', 'stuck');
    assert.deepEqual(
      (await workers()).map((w) => [w.attempt, w.try, w.endReason]),
      [
        [1, 1, 'watchdog: no activity for 60 s (limit 60 s)'],
        [1, 2, 'watchdog: no activity for 60 s (limit 60 s)'],
      ],
    );
    assert.equal((await f.sessionsOf(d.id)).filter((s) => s.phase === 'audit').length, 0);
    const kills = logEvents(d).filter((e) => e.type === 'watchdog-kill');
    assert.deepEqual(
      kills.map((k) => [k.try, k.reason]),
      [
        [1, 'no activity for 60 s (limit 60 s)'],
        [2, 'no activity for 60 s (limit 60 s)'],
      ],
    );
    const activities = f.linear.activitiesOf('as-hang');
    assert.deepEqual(
      ofType(activities, 'action')
        .filter((a) => a.action === 'Watchdog')
        .map((a) => a.parameter),
      ['killed the worker (no activity for 60 s (limit 60 s)); retrying once'],
    );
    assert.match(ofType(activities, 'error')[0]?.body ?? '', /the watchdog killed the worker twice/);
    assert.equal(f.notifier.texts.length, 1);
  });

  it('stop mid-worker kills it and says so; a later prompt clears the stop and the result is kept', async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'OK-3', title: 'Greeting', description: 'Add a greeting. [[hang]]' });
    await f.pipeline.dispatch('OK-3', { agentSessionId: 'as-stop' });
    const d0 = (await f.pipeline.get('OK-3')) as DispatchRecord;
    await waitFor('worker running', async () => (await f.sessionsOf(d0.id))[0]?.status === 'running');
    const stopped = await f.pipeline.onStop('as-stop', 'stop:t1');
    assert.equal(stopped.outcome, 'stopped');
    const d1 = (await f.pipeline.get('OK-3')) as DispatchRecord;
    assert.equal(d1.status, 'stopped');
    assert.equal(d1.stopRequested, true);
    assert.equal((await f.sessionsOf(d0.id))[0]?.status, 'killed');
    await f.pipeline.idle();
    assert.equal((await f.sessionsOf(d0.id)).length, 1, 'no audit after a stop');
    const responses = () => ofType(f.linear.activitiesOf('as-stop'), 'response');
    assert.equal(responses().length, 1);
    assert.match(responses()[0]?.body ?? '', /Stopped work on OK-3 \(during the worker\)/);
    assert.equal((await f.pipeline.onStop('as-stop', 'stop:t2')).outcome, 'idle');

    // The user fixes the issue text and asks to continue: the stop flag is cleared and the run completes.
    await f.linear.updateIssue('OK-3', { description: 'Add a greeting.' });
    const resumed = await f.pipeline.onPrompt('as-stop', 'please continue, and {{title}} stays');
    assert.equal(resumed.outcome, 'reopened');
    assert.equal((await f.pipeline.get('OK-3'))?.stopRequested, false);
    const d = await until(f, 'OK-3', 'done');
    assert.equal(d.attempt, 2);
    assert.equal(d.roundStart, 2);
    const worker2 = (await f.sessionsOf(d.id)).filter((s) => s.phase === 'worker')[1];
    assert.match(worker2?.prompt ?? '', /- please continue, and \{ \{title\}\} stays/);
    assert.match(responses().at(-1)?.body ?? '', /OK-3 is done/);
    assert.equal(f.linear.issue('OK-3').state?.name, 'Done');
  });

  it('refuses a duplicate dispatch of an active issue, telling the other agent session', async () => {
    const f = await setup();
    f.linear.addIssue({ identifier: 'OK-4', description: 'Work. [[hang]]' });
    const [a, b] = await Promise.all([
      f.pipeline.dispatch('OK-4', { agentSessionId: 'as-a' }),
      f.pipeline.dispatch('issue-ok-4', { agentSessionId: 'as-b' }),
    ]);
    assert.deepEqual([a.outcome, b.outcome].sort(), ['duplicate', 'started']);
    assert.equal(a.dispatch.id, b.dispatch.id);
    const loser = a.outcome === 'duplicate' ? 'as-a' : 'as-b';
    assert.match(ofType(f.linear.activitiesOf(loser), 'response')[0]?.body ?? '', /already being worked on/);
    assert.equal(
      (await f.pipeline.dispatch('OK-4', { agentSessionId: a.dispatch.agentSessionId ?? '' })).outcome,
      'duplicate',
    );
    assert.equal((await f.pipeline.list()).length, 1);
    await f.pipeline.onStop(a.dispatch.agentSessionId ?? '', 'stop:t3');
  });

  it('a gemini worker by label, audited by a read-only gemini session (approval mode default)', async () => {
    const f = await setup();
    f.linear.addIssue({
      identifier: 'GEM-1',
      title: 'Greeting',
      description: 'Add a greeting.',
      labels: [{ id: 'l', name: 'harness:gemini' }],
    });
    await f.pipeline.dispatch('GEM-1', { agentSessionId: 'as-gem' });
    const d = await until(f, 'GEM-1', 'done');
    assert.equal(d.harness, 'gemini');
    assert.equal(d.model, null, 'the claude tier model is not sent to gemini');
    const runs = f.invocations().filter((i) => i.harness === 'gemini');
    assert.equal(runs.length, 2);
    assert.equal(flagOf(runs[0]?.argv ?? [], '--approval-mode'), 'yolo');
    assert.equal(flagOf(runs[1]?.argv ?? [], '--approval-mode'), 'default');
    assert.equal(runs[1]?.cwd, d.worktreePath);
  });

  it('survives a kill -9 mid-run: the interrupted worker is resumed, the queued dispatch runs, nothing doubles or is lost', async () => {
    const f = await setup({ overrides: { 'linear.pipeline.maxConcurrent': 1 } });
    f.linear.addIssue({ identifier: 'OK-5', title: 'Slow one', description: 'Work slowly. [[sleep:600000]]' });
    f.linear.addIssue({ identifier: 'OK-6', title: 'Next one', description: 'Add a greeting.' });
    assert.equal((await f.pipeline.dispatch('OK-5', { agentSessionId: 'as-5' })).outcome, 'started');
    const queued = await f.pipeline.dispatch('OK-6', { agentSessionId: 'as-6' });
    assert.deepEqual([queued.outcome, queued.outcome === 'queued' ? queued.position : 0], ['queued', 1]);
    const first = (await f.pipeline.get('OK-5')) as DispatchRecord;
    await waitFor('OK-5 worker running', async () => (await f.sessionsOf(first.id))[0]?.status === 'running');
    const workerId = (await f.sessionsOf(first.id))[0]?.id as string;

    const g = await f.crash();
    fixtures.push(g);
    assert.equal((await g.manager.get(workerId)).status, 'interrupted');
    assert.equal(
      (await g.pipeline.dispatch('OK-6', { agentSessionId: 'as-6' })).outcome,
      'duplicate',
      'the queued one is still there',
    );
    const done5 = await until(g, 'OK-5', 'done');
    const done6 = await until(g, 'OK-6', 'done');

    // OK-5: the same worker session was resumed in place (no second worker), then audited once.
    assert.deepEqual(
      (await g.sessionsOf(done5.id)).map((s) => [s.phase, s.id === workerId]),
      [
        ['worker', true],
        ['audit', false],
      ],
    );
    assert.match((await g.manager.get(workerId)).spec.prompt, /switchboard restarted while you were working on OK-5/);
    const workerRuns = g
      .invocations()
      .filter((i) => i.harness === 'claude' && i.argv.some((a) => a.startsWith('--resume')));
    assert.equal(workerRuns.length, 1, 'one resume of the worker');
    assert.ok(logEvents(done5).some((e) => e.type === 'worker-resumed'));
    // OK-6 waited for the slot and then ran normally; each issue has exactly one dispatch.
    assert.deepEqual(
      (await g.sessionsOf(done6.id)).map((s) => s.phase),
      ['worker', 'audit'],
    );
    assert.deepEqual(
      (await g.pipeline.list()).map((d) => [d.identifier, d.status]),
      [
        ['OK-5', 'done'],
        ['OK-6', 'done'],
      ],
    );
    assert.equal(ofType(g.linear.activitiesOf('as-5'), 'response').length, 1);
    assert.equal(ofType(g.linear.activitiesOf('as-6'), 'response').length, 1);
  });

  it('a codex worker by label, audited by a codex session in the read-only sandbox', async () => {
    const f = await setup();
    f.linear.addIssue({
      identifier: 'CDX-1',
      title: 'Greeting',
      description: 'Add a greeting.',
      labels: [{ id: 'l', name: 'harness:codex' }],
    });
    await f.pipeline.dispatch('CDX-1', { agentSessionId: 'as-cdx' });
    const d = await until(f, 'CDX-1', 'done');
    const runs = f.invocations().filter((i) => i.harness === 'codex');
    assert.equal(runs.length, 2);
    assert.ok(runs[0]?.argv.includes('--dangerously-bypass-approvals-and-sandbox'), 'the worker may edit');
    assert.equal(flagOf(runs[1]?.argv ?? [], '-s'), 'read-only');
    assert.ok(!runs[1]?.argv.includes('--dangerously-bypass-approvals-and-sandbox'));
    assert.equal(flagOf(runs[1]?.argv ?? [], '-C'), d.worktreePath);
    const actions = ofType(f.linear.activitiesOf('as-cdx'), 'action');
    assert.ok(
      actions.some((a) => a.action.startsWith('Auditor:')),
      "the auditor's command shows as an action",
    );
  });
});

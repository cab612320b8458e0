// A cron run that falls due while the daemon is down (SIGKILLed right after the task was added): with
// `scheduler.missedRuns: 'run-once'` exactly one catch-up run happens after the restart; with `skip` none happens and the
// skip is recorded in the task's run history (a `missed`/`skipped` run row: cron.list's lastRun, /cron_list's "⚠️ … missed
// while the daemon was down (skipped …)" line) and logged at warn. Cron has minute resolution, so each case waits for the
// next minute while the daemon is down; both cases run side by side, each with its own daemon.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CrashRig, CronTaskInfo } from '../support/crash-rig.ts';
import { assertNoErrorLines, RIG_USER, withCrashRig } from '../support/crash-rig.ts';
import { isCronTurn, logLines, textsTo } from '../support/e2e-daemon.ts';
import type { ChatBody } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;

function cronBodies(rig: CrashRig): ChatBody[] {
  return rig.model
    .completionRequests()
    .map((r) => r.body as ChatBody)
    .filter(isCronTurn);
}

/**
 * Adds an every-minute task and SIGKILLs the daemon before its first due time (waiting for the next minute first when
 * the due time is too close to kill in time), then waits until that due time has passed. Returns the task and the
 * due time missed.
 */
async function missOneRun(rig: CrashRig): Promise<{ task: { id: string; nextRunAt: number }; missedDueAt: number }> {
  await rig.start();
  // Far enough from the minute boundary that the kill lands before it.
  await waitFor('a moment well before the next minute', () => new Date().getSeconds() < 50, LONG);
  const task = await rig.daemon.rpc<{ id: string; nextRunAt: number }>('cron.add', {
    name: 'tests-green',
    schedule: '* * * * *',
    prompt: 'Run the tests and report.',
  });
  await rig.kill();
  assert.ok(Date.now() < task.nextRunAt, 'the daemon was killed before the run fell due');
  await waitFor('the due time to pass while the daemon is down', () => Date.now() > task.nextRunAt + 500, 75_000);
  return { task, missedDueAt: task.nextRunAt };
}

async function listed(rig: CrashRig): Promise<{ tasks: CronTaskInfo[]; missedRuns: string }> {
  return rig.daemon.rpc<{ tasks: CronTaskInfo[]; missedRuns: string }>('cron.list', {});
}

describe('cron runs missed while the daemon was down', { concurrency: true }, () => {
  it("missedRuns 'run-once': exactly one catch-up run after the restart", async () => {
    await withCrashRig(
      'sb-missed-once-',
      (body) => chatText(`done: ${lastUserText(body).split('\n')[0]}`),
      { scheduler: { missedRuns: 'run-once' } },
      async (rig) => {
        const { task, missedDueAt } = await missOneRun(rig);
        await rig.start();

        const catchUps = (): ChatBody[] => cronBodies(rig).filter((b) => lastUserText(b).includes('catch-up run'));
        const first = await waitFor('the catch-up run to reach the model', () => catchUps()[0], LONG);
        assert.match(
          lastUserText(first),
          new RegExp(
            `\\[Scheduled task "tests-green" \\(${task.id}\\) — catch-up run: \\d+ runs? w(?:as|ere) missed while switchboard was down \\(first due ${new Date(missedDueAt).toISOString()}`,
          ),
        );
        assert.match(lastUserText(first), /Run the tests and report\./);
        const info = await waitFor(
          'the catch-up run to be recorded',
          async () => {
            const { tasks } = await listed(rig);
            const t = tasks[0];
            return t?.lastRun?.kind === 'catch-up' &&
              t.lastRun.status === 'posted' &&
              t.nextRunAt !== null &&
              t.nextRunAt > Date.now()
              ? t
              : undefined;
          },
          LONG,
        );
        assert.ok((info.lastRun?.missed ?? 0) >= 1);
        // The engine has run it (the cron session is idle again) and no second catch-up followed.
        await waitFor(
          'the cron session to be idle',
          async () => {
            const { sessions } = await rig.daemon.rpc<{
              sessions: { descriptor: { type: string }; state: string; queued: number }[];
            }>('engine.sessions', {});
            return sessions.some((s) => s.descriptor.type === 'cron' && s.state === 'idle' && s.queued === 0);
          },
          LONG,
        );
        assert.equal(catchUps().length, 1, 'exactly one catch-up run');
        assert.ok(
          logLines(rig.daemon.output()).some((l) => l.level === 40 && /making one catch-up run/.test(String(l.msg))),
        );
        assert.ok(!rig.telegram.sent.some((m) => m.text.includes('Internal error.')));
        await rig.stop();
        assertNoErrorLines(rig);
      },
    );
  });

  it("missedRuns 'skip': no run after the restart, and the skip is recorded", async () => {
    await withCrashRig(
      'sb-missed-skip-',
      (body) => chatText(`done: ${lastUserText(body).split('\n')[0]}`),
      { scheduler: { missedRuns: 'skip' } },
      async (rig) => {
        const { task, missedDueAt } = await missOneRun(rig);
        await rig.start();

        // The scheduler applied the policy before the daemon listened: the skip is on record, and nothing was posted.
        const { tasks, missedRuns } = await listed(rig);
        assert.equal(missedRuns, 'skip');
        const [t] = tasks;
        assert.equal(t?.id, task.id);
        assert.equal(t?.lastRun?.kind, 'missed');
        assert.equal(t?.lastRun?.status, 'skipped');
        assert.ok((t?.lastRun?.missed ?? 0) >= 1);
        assert.ok((t?.lastRun?.dueAt ?? 0) >= missedDueAt, 'the record names the last due time missed');
        assert.ok(t?.nextRunAt && t.nextRunAt > missedDueAt, 'the task waits for its next due time');
        const skipped = logLines(rig.daemon.output()).find(
          (l) => l.level === 40 && /skipped \(scheduler\.missedRuns = skip\)/.test(String(l.msg)),
        );
        assert.ok(skipped, 'the skip is logged');
        assert.equal(skipped.task, task.id);
        // …and shown to the user by /cron_list.
        rig.telegram.pushMessage({ fromId: RIG_USER, text: '/cron_list' });
        const shown = await waitFor('the /cron_list answer', () => textsTo(rig.telegram, RIG_USER)[0], LONG);
        assert.match(shown, /tests-green[\s\S]*⚠️ \d+ runs? missed while the daemon was down \(skipped, last due /);
        assert.match(shown, /Missed runs after downtime: skip/);

        // Nothing ran for the missed due time: no cron session exists, and the model was not asked.
        const { sessions } = await rig.daemon.rpc<{ sessions: { descriptor: { type: string } }[] }>(
          'engine.sessions',
          {},
        );
        const due = new Date(missedDueAt).toISOString();
        assert.ok(
          !cronBodies(rig).some(
            (b) => lastUserText(b).includes('catch-up run') || lastUserText(b).includes(`run due ${due}`),
          ),
          'no run for the missed due time',
        );
        if (cronBodies(rig).length === 0)
          assert.ok(!sessions.some((s) => s.descriptor.type === 'cron'), 'no cron session was made');
        await rig.stop();
        assertNoErrorLines(rig);
      },
    );
  });
});

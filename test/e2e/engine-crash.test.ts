// Crash tests of the engine on the real daemon process: SIGKILL with a user turn in flight and messages queued behind it,
// and with a cron turn in flight; after a restart the seed's restore rules hold (engine-session-types.md: a cut-off user
// turn is answered "Internal error." in its chat and not re-run, queued messages are processed in order, a cut-off cron
// turn is closed silently and its task keeps its schedule), nothing is answered twice, and a further restart re-runs
// nothing; and a crash right after the orchestrator launched a coding session (the session comes back interrupted, its
// orphaned agent is stopped, the chat and the orchestrator hear of it). The cases run side by side (each has its own
// daemon, fake Telegram and mock model).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CronTaskInfo } from '../support/crash-rig.ts';
import { assertNoErrorLines, RIG_USER, withCrashRig } from '../support/crash-rig.ts';
import { isCronTurn, logLines, systemText, textsTo } from '../support/e2e-daemon.ts';
import type { ChatBody, ChatReply, MockOpenAIChat } from '../support/mock-openai-chat.ts';
import { chatText, chatToolCall, lastUserText, messageText, pendingToolResults } from '../support/mock-openai-chat.ts';
import { waitFor } from '../support/wait-for.ts';

const LONG = 60_000;
const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

/** True while a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface EngineSession {
  id: string;
  descriptor: { type: string; id?: string };
  state: 'idle' | 'running';
  queued: number;
  lastOutcome: string | null;
}

function bodies(model: MockOpenAIChat): ChatBody[] {
  return model.completionRequests().map((r) => r.body as ChatBody);
}

function isUserTurn(body: ChatBody): boolean {
  return systemText(body).includes(`serves the chat telegram|${RIG_USER}`);
}

/** Holds every answer until `release()`; afterwards answers at once with `answer(body)`. */
function heldModel(
  hold: (body: ChatBody) => boolean,
  answer: (body: ChatBody) => ChatReply,
): {
  handler: (body: ChatBody) => ChatReply | Promise<ChatReply>;
  release(): void;
} {
  let holding = true;
  const held: (() => void)[] = [];
  return {
    handler(body) {
      if (holding && hold(body))
        return new Promise<ChatReply>((resolve) => held.push(() => resolve(chatText('answered too late'))));
      return answer(body);
    },
    release() {
      holding = false;
      for (const resolve of held.splice(0)) resolve();
    },
  };
}

describe('SIGKILL of the daemon with engine work in flight, then restarts', { concurrency: true }, () => {
  it('a user turn in flight and two messages queued: "Internal error." once for the cut-off one, the queued ones answered in order, nothing twice', async () => {
    const model = heldModel(isUserTurn, (body) => chatText(`answer to: ${lastUserText(body)}`));
    await withCrashRig('sb-crash-user-', model.handler, {}, async (rig) => {
      const { telegram } = rig;
      const userBodies = (): ChatBody[] => bodies(rig.model).filter(isUserTurn);
      const asked = (text: string): number => userBodies().filter((b) => lastUserText(b) === text).length;
      await rig.start();

      const first = telegram.pushMessage({ fromId: RIG_USER, text: 'first' });
      await waitFor('the turn of "first" to call the model', () => asked('first') === 1, LONG);
      const second = telegram.pushMessage({ fromId: RIG_USER, text: 'second' });
      const third = telegram.pushMessage({ fromId: RIG_USER, text: 'third' });
      // The connector confirms an update only once the engine has it on disk.
      await telegram.waitFor(
        () => telegram.confirmedUpTo >= third.updateId,
        'the daemon to confirm the three updates',
        LONG,
      );
      const queued = await rig.daemon.rpc<{ sessions: EngineSession[] }>('engine.sessions', {});
      const user = queued.sessions.find((s) => s.descriptor.type === 'user');
      assert.ok(user, 'the user session exists');
      assert.equal(user.state, 'running');
      assert.equal(user.queued, 2, 'two messages wait behind the turn in flight');
      assert.equal(telegram.sent.length, 0, 'nothing was answered before the kill');

      await rig.kill();
      model.release();
      await rig.start();

      const chat = (): string[] => textsTo(telegram, RIG_USER);
      await waitFor('the answers after the restart', () => chat().includes('answer to: third'), LONG);
      await waitFor('the outbox to be empty', async () => (await rig.health()).outbox.pending === 0, LONG);
      assert.deepEqual(chat(), ['Internal error.', 'answer to: second', 'answer to: third']);
      const internal = telegram.sent.find((m) => m.text === 'Internal error.');
      assert.equal(internal?.replyToMessageId, first.messageId, '"Internal error." answers the cut-off message');
      assert.equal(telegram.sent.find((m) => m.text === 'answer to: second')?.replyToMessageId, second.messageId);
      assert.equal(telegram.sent.find((m) => m.text === 'answer to: third')?.replyToMessageId, third.messageId);
      assert.deepEqual(
        userBodies().map(lastUserText),
        ['first', 'second', 'third'],
        'the cut-off turn is not re-run; each queued message runs once, in order',
      );
      const restored = rig.restored();
      assert.equal(restored.pending, 2);
      assert.equal(restored.cutOff, 1);
      assert.ok(
        logLines(rig.daemon.output()).some(
          (l) => l.level === 40 && l.msg === 'engine turn cut off by a restart; closing it' && l.type === 'user',
        ),
      );

      // Everything is settled: a further kill and restart finds nothing to do.
      await waitFor(
        'the engine to be idle',
        async () => {
          const { sessions } = await rig.daemon.rpc<{ sessions: EngineSession[] }>('engine.sessions', {});
          return sessions.every((s) => s.state === 'idle' && s.queued === 0);
        },
        LONG,
      );
      const requestsBefore = rig.model.completionRequests().length;
      const sentBefore = telegram.sent.length;
      await rig.kill();
      await rig.start();
      const again = rig.restored();
      assert.equal(again.pending, 0, 'nothing pending after the second restart');
      assert.equal(again.cutOff, 0, 'no cut-off turn after the second restart');
      assert.equal((await rig.health()).outbox.pending, 0, 'nothing left to deliver');
      const { sessions } = await rig.daemon.rpc<{ sessions: EngineSession[] }>('engine.sessions', {});
      assert.ok(
        sessions.every((s) => s.state === 'idle' && s.queued === 0),
        'no turn runs after the second restart',
      );
      assert.equal(rig.model.completionRequests().length, requestsBefore, 'the model is not asked again');
      assert.equal(telegram.sent.length, sentBefore, 'nothing is sent again');
      assert.deepEqual(telegram.pendingUpdates(), [], 'every update stays confirmed');
      await rig.stop();

      assertNoErrorLines(rig);
    });
  });

  it('a cron turn in flight: closed silently after the restart, not re-run, and the task keeps its schedule', async () => {
    const model = heldModel(isCronTurn, (body) => chatText(`cron run done: ${lastUserText(body).split('\n')[0]}`));
    await withCrashRig('sb-crash-cron-', model.handler, {}, async (rig) => {
      const { telegram } = rig;
      const dueOf = (body: ChatBody): string | undefined => /run due (\S+)\]/.exec(lastUserText(body))?.[1];
      const cronBodies = (): ChatBody[] => bodies(rig.model).filter(isCronTurn);
      await rig.start();
      const task = await rig.daemon.rpc<{ id: string; nextRunAt: number }>('cron.add', {
        name: 'build-check',
        schedule: '* * * * *',
        prompt: 'Check the build and report.',
      });
      assert.ok(task.nextRunAt > Date.now() - 1_000);

      // The run falls due at the next minute and its turn calls the model, which holds its answer.
      const inFlight = await waitFor('the cron turn to call the model', () => cronBodies()[0], 90_000);
      const due = dueOf(inFlight);
      assert.equal(due, new Date(task.nextRunAt).toISOString(), 'the run of the first due time');
      await waitFor(
        'the run to be recorded as posted',
        async () => {
          const { tasks } = await rig.daemon.rpc<{ tasks: CronTaskInfo[] }>('cron.list', {});
          return tasks[0]?.lastRun?.status === 'posted';
        },
        LONG,
      );

      await rig.kill();
      model.release();
      await rig.start();

      const restored = rig.restored();
      assert.equal(restored.cutOff, 1, 'the cron turn was found cut off');
      assert.equal(restored.pending, 0, 'nothing queued to run again');
      const lines = logLines(rig.daemon.output());
      assert.ok(lines.some((l) => l.msg === 'engine turn cut off by a restart; closing it' && l.type === 'cron'));
      assert.ok(
        !lines.some((l) => /posting it again/.test(String(l.msg))),
        'the scheduler does not post the run again',
      );
      const settled = await waitFor(
        'the cron session to be idle',
        async () => {
          const { sessions } = await rig.daemon.rpc<{ sessions: EngineSession[] }>('engine.sessions', {});
          const cron = sessions.find((s) => s.descriptor.type === 'cron');
          return cron && cron.state === 'idle' && cron.queued === 0 ? cron : undefined;
        },
        LONG,
      );
      assert.equal(settled.descriptor.id, task.id);
      assert.equal(cronBodies().filter((b) => dueOf(b) === due).length, 1, 'the cut-off cron turn is not re-run');

      // Still scheduled: a next due time in the future, and the cut-off run recorded as posted (not failed or abandoned).
      const listed = await waitFor(
        'a next run in the future',
        async () => {
          const { tasks } = await rig.daemon.rpc<{ tasks: CronTaskInfo[] }>('cron.list', {});
          const t = tasks[0];
          return tasks.length === 1 && t?.nextRunAt && t.nextRunAt > Date.now() ? t : undefined;
        },
        LONG,
      );
      assert.equal(
        listed.lastRun?.status,
        'posted',
        `the last run is recorded as posted: ${JSON.stringify(listed.lastRun)}`,
      );
      assert.ok((listed.lastRun?.dueAt ?? 0) >= task.nextRunAt);
      const status = await rig.daemon.rpc<{ cron: { tasks: number; enabled: number; nextRunAt: number | null } }>(
        'scheduler.status',
        {},
      );
      assert.equal(status.cron.enabled, 1);
      assert.ok(status.cron.nextRunAt !== null && status.cron.nextRunAt >= (listed.nextRunAt ?? 0));

      assert.ok(!telegram.sent.some((m) => m.text.includes('Internal error.')), 'no "Internal error." anywhere');
      assert.equal(telegram.sent.length, 0, 'a cron session has no chat');
      await rig.stop();
      assertNoErrorLines(rig);
    });
  });

  it('a turn in flight right after claude_launch: "Internal error.", the session comes back interrupted, its agent is stopped, chat and orchestrator are told', async () => {
    let workdir = '';
    const model = heldModel(
      (body) => isUserTurn(body) && pendingToolResults(body).some((m) => messageText(m).includes('Launched (claude)')),
      (body) => {
        const text = lastUserText(body);
        if (pendingToolResults(body).length > 0) return chatText('Launched build-fix.');
        if (text === 'please fix the build')
          return chatToolCall('claude_launch', { prompt: '[[hang]] fix the build', name: 'build-fix', workdir });
        const interrupted = /⏸️ Coding session "build-fix" \[([^\]]+)\] was interrupted/.exec(text);
        if (interrupted)
          return chatText(`build-fix (${interrupted[1]}) was cut off by a restart; say "resume" to continue it.`);
        return chatText(`unexpected: ${text}`);
      },
    );
    await withCrashRig('sb-crash-launch-', model.handler, {}, async (rig) => {
      const { telegram } = rig;
      workdir = join(rig.root, 'work');
      mkdirSync(workdir, { recursive: true });
      const invocations = join(rig.root, 'agents.jsonl');
      rig.configure({ harnesses: { claude: { executable: FAKE_CLAUDE, env: { FAKE_AGENT_LOG: invocations } } } });
      await rig.start();

      const asked = telegram.pushMessage({ fromId: RIG_USER, text: 'please fix the build' });
      const chat = (): string[] => textsTo(telegram, RIG_USER);
      await waitFor('the launch line', () => chat().find((t) => t.startsWith('↩️ [build-fix] Launched:')), LONG);
      const running = await waitFor(
        'the coding session to run',
        async () => {
          const { sessions } = await rig.daemon.rpc<{
            sessions: { id: string; name: string; status: string; backendSessionId: string | null }[];
          }>('sessions.list', {});
          const s = sessions.find((x) => x.name === 'build-fix');
          return s?.status === 'running' && s.backendSessionId ? s : undefined;
        },
        LONG,
      );
      // The orchestrator's turn is in flight: its model call after claude_launch is held.
      await waitFor(
        'the model call after the launch',
        () => bodies(rig.model).some((b) => pendingToolResults(b).length > 0),
        LONG,
      );
      const pid = (JSON.parse(readFileSync(invocations, 'utf8').trim().split('\n')[0] ?? '{}') as { pid: number }).pid;
      assert.ok(alive(pid), 'the agent process runs');

      await rig.kill();
      model.release();
      assert.ok(alive(pid), 'the agent outlives the SIGKILLed daemon');
      await rig.start();

      await waitFor('"Internal error." for the cut-off turn', () => chat().includes('Internal error.'), LONG);
      assert.equal(telegram.sent.find((m) => m.text === 'Internal error.')?.replyToMessageId, asked.messageId);
      const notice = await waitFor(
        'the interruption notice',
        () => chat().find((t) => t.startsWith('⏸️ [build-fix] Interrupted by a daemon restart')),
        LONG,
      );
      assert.match(notice, /It can be resumed: claude_resume build-fix/);
      const told = await waitFor(
        'the orchestrator to be woken about it',
        () =>
          bodies(rig.model).find(
            (b) =>
              isUserTurn(b) && lastUserText(b).includes(`Coding session "build-fix" [${running.id}] was interrupted`),
          ),
        LONG,
      );
      assert.match(lastUserText(told), /origin="wake"/);
      await waitFor(
        'the orchestrator reply',
        () => chat().includes(`build-fix (${running.id}) was cut off by a restart; say "resume" to continue it.`),
        LONG,
      );
      await waitFor('the orphaned agent to be stopped', () => !alive(pid), LONG);
      const { sessions } = await rig.daemon.rpc<{ sessions: { name: string; status: string }[] }>('sessions.list', {});
      assert.equal(sessions.find((x) => x.name === 'build-fix')?.status, 'interrupted');
      assert.ok(!chat().includes('Launched build-fix.'), 'the cut-off turn is not re-run');
      for (const text of ['Internal error.', notice])
        assert.equal(chat().filter((t) => t === text).length, 1, `"${text.split('\n')[0]}" sent once`);
      await rig.stop();
      assertNoErrorLines(rig);
    });
  });
});

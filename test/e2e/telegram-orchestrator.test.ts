// The orchestrator path end to end on the real daemon (in this process): a Telegram user (fake Bot API) asks for a fix,
// the orchestrator (a scripted model behind the real AI SDK openai-compatible provider) launches a coding session with
// claude_launch (the fake Claude CLI), the chat hears the launch and the question, the orchestrator is woken by the wake
// event and answers with claude_respond, the session's next turn runs and the session ends (killed, idle after that turn:
// idleTimeoutMinutes is 0.2 here), and every step reaches the chat; a single-turn session's completion carries its cost
// and output preview. Then chat commands with no model at all, and a sender who is not on the allow-list.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { LoggedDaemon } from '../support/e2e-daemon.ts';
import { startLoggedDaemon } from '../support/e2e-daemon.ts';
import {
  chatInference,
  diagnostics,
  systemText,
  telegramSection,
  textsTo,
  unexpectedErrors,
} from '../support/e2e-daemon.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { ChatBody, ChatReply, MockOpenAIChat } from '../support/mock-openai-chat.ts';
import {
  chatText,
  chatToolCall,
  lastUserText,
  messageText,
  pendingToolResults,
  startMockOpenAIChat,
} from '../support/mock-openai-chat.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const USER = 4242;
const STRANGER = 777;
/** Generous: two cores shared with other test files. */
const LONG = 60_000;

/** The requests the orchestrator's session made (its system prompt names the Telegram chat). */
function orchestratorRequests(mock: MockOpenAIChat): ChatBody[] {
  return mock
    .completionRequests()
    .map((r) => r.body as ChatBody)
    .filter((b) => systemText(b).includes(`serves the chat telegram|${USER}`));
}

describe('Telegram → orchestrator → coding session → notifications → wake → claude_respond', () => {
  const dir = tempDir('sb-e2e-tg-');
  const workdir = join(dir.path, 'src', 'app');
  let telegram: FakeTelegram;
  let model: MockOpenAIChat;
  let run: LoggedDaemon;

  /** The orchestrator as scripted here; see each branch. */
  function orchestrator(body: ChatBody): ChatReply {
    const results = pendingToolResults(body).map(messageText).join('\n');
    const last = lastUserText(body);
    if (results.includes('Launched (claude)') && results.includes('suite-run'))
      return chatText('Started suite-run for one pass over the suite.');
    if (results.includes('Launched (claude)'))
      return chatText('I started flaky-fix on it and will tell you when the test is green.');
    if (results.includes('Responded:'))
      return chatText('flaky-fix asked which file to change; I told it to change a.ts.');
    if (results) return chatText(`Unexpected tool result: ${results}`);
    if (last.includes('fix the flaky test')) {
      return chatToolCall('claude_launch', {
        prompt: `[[question]] Fix the flaky test in ${workdir} and run the suite until it is green`,
        name: 'flaky-fix',
        workdir,
      });
    }
    if (last.includes('run the suite once')) {
      return chatToolCall('claude_launch', {
        prompt: 'Run the test suite once and report',
        name: 'suite-run',
        workdir,
        multiTurnDisabled: true,
      });
    }
    if (last.includes('origin="wake"')) {
      const asked = /Coding session "flaky-fix" \[([^\]]+)\] is waiting for input: it asked a question/.exec(last);
      if (asked) return chatToolCall('claude_respond', { session: asked[1] as string, message: 'Change a.ts' });
      const done = /✅ Coding session "([^"]+)" \[[^\]]+\] completed/.exec(last);
      if (done) return chatText(`${done[1]} completed: the test is green.`);
      const idle = /⛔ Coding session "([^"]+)" \[[^\]]+\] was killed \(idle for/.exec(last);
      if (idle) return chatText(`${idle[1]} went idle after its last turn: the test is green.`);
      return chatText('Noted.');
    }
    return chatText(`I do not know what to do with: ${last}`);
  }

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    telegram = await startFakeTelegram();
    model = await startMockOpenAIChat({ handler: orchestrator });
    run = await startLoggedDaemon(join(dir.path, 'home'), {
      workspaces: [dir.path],
      'harnesses.claude.executable': FAKE_CLAUDE,
      'channels.telegram': telegramSection(telegram, [USER]),
      'channels.web.enabled': false,
      inference: chatInference(model.url),
      // A multi-turn session completes once it has waited this long (0.2 min = 12 s) after a turn.
      idleTimeoutMinutes: 0.2,
    });
  });

  afterEach((t) => {
    if ((t as { passed?: boolean }).passed === false && run) console.log(diagnostics(telegram, [run.output()]));
  });

  after(async () => {
    await run?.daemon.stop();
    await telegram?.close();
    await model?.close();
    dir.remove();
  });

  it('launches, asks, is answered by the woken orchestrator, completes, and the chat hears each step', async () => {
    const { daemon } = run;
    const pushed = telegram.pushMessage({
      fromId: USER,
      text: `fix the flaky test in ${workdir} and tell me when it's green`,
    });
    const chat = (): string[] => textsTo(telegram, USER);

    // The orchestrator's first request is the user's text, with the coding tools offered.
    const first = await waitFor('the orchestrator to be asked', () => orchestratorRequests(model)[0], LONG);
    assert.match(lastUserText(first), /fix the flaky test/);
    assert.ok(
      first.tools?.some((t) => t.function?.name === 'claude_launch'),
      'claude_launch is offered',
    );
    assert.ok(
      first.tools?.some((t) => t.function?.name === 'claude_respond'),
      'claude_respond is offered',
    );

    // claude_launch ran: the chat shows the launch line and the orchestrator's reply (which answers the user's message).
    await waitFor('the launch line', () => chat().find((t) => t.startsWith('↩️ [flaky-fix] Launched:')), LONG);
    assert.match(
      chat().find((t) => t.startsWith('↩️ [flaky-fix] Launched:')) ?? '',
      /^↩️ \[flaky-fix\] Launched:\n\[\[question\]\] Fix the flaky test in /,
    );
    await waitFor(
      'the orchestrator reply',
      () => chat().includes('I started flaky-fix on it and will tell you when the test is green.'),
      LONG,
    );
    const reply = telegram.sent.find((m) => m.text.startsWith('I started flaky-fix'));
    assert.equal(reply?.replyToMessageId, pushed.messageId, 'the orchestrator answers the user message');
    const session = (await daemon.services.sessions.list()).find((s) => s.name === 'flaky-fix');
    assert.ok(session, 'the coding session exists');
    assert.equal(session.originChannel, `telegram|${USER}`);

    // The agent asks; the chat hears the question.
    const asks = await waitFor(
      'the question in the chat',
      () => chat().find((t) => t.startsWith('🔔 [flaky-fix] asks:')),
      LONG,
    );
    assert.equal(asks, '🔔 [flaky-fix] asks:\nWhich file should I change?');

    // The orchestrator is woken by the wake event (not by the user) and answers with claude_respond.
    const woken = await waitFor(
      'the wake to reach the orchestrator',
      () => orchestratorRequests(model).find((b) => lastUserText(b).includes('origin="wake"')),
      LONG,
    );
    const wakeText = lastUserText(woken);
    assert.match(
      wakeText,
      new RegExp(`Coding session "flaky-fix" \\[${session.id}\\] is waiting for input: it asked a question`),
    );
    assert.match(wakeText, /Which file should I change\?/);
    assert.match(wakeText, new RegExp(`claude_respond\\(session='${session.id}'`));
    await waitFor('the Responded line', () => chat().includes('↩️ [flaky-fix] Responded:\nChange a.ts'), LONG);
    await waitFor(
      'the orchestrator to say what it answered',
      () => chat().includes('flaky-fix asked which file to change; I told it to change a.ts.'),
      LONG,
    );

    // The session's next turn answers; the user hears it, then the session is killed for idling, with the reason.
    await waitFor(
      'the answer turn in the chat',
      () => chat().some((t) => t.includes('FAKE CLAUDE REPLY to: Change a.ts')),
      LONG,
    );
    const ended = await waitFor('the idle end', () => chat().find((t) => t.startsWith('⛔ [flaky-fix] Killed')), LONG);
    assert.match(ended, new RegExp(`📁 ${workdir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(ended, /ℹ️ idle for 12s$/, 'it ended after idleTimeoutMinutes (0.2 min)');
    const record = await daemon.services.sessions.get(session.id);
    assert.equal(record.status, 'killed');
    assert.equal(record.endReason, 'idle for 12s');
    assert.equal(Math.round(record.costUsd * 1e6), 200, 'two agent turns at $0.0001 each');

    // The idle end wakes the orchestrator too, and its reply reaches the chat.
    const told = await waitFor(
      'the orchestrator to be told of the idle end',
      () =>
        orchestratorRequests(model).find((b) =>
          new RegExp(`⛔ Coding session "flaky-fix" \\[${session.id}\\] was killed \\(idle for 12s\\)`).test(
            lastUserText(b),
          ),
        ),
      LONG,
    );
    assert.match(lastUserText(told), /origin="wake"/);
    await waitFor(
      'the orchestrator to say it is green',
      () => chat().includes('flaky-fix went idle after its last turn: the test is green.'),
      LONG,
    );

    // Every message went to the user's chat, each once.
    const once = [
      '↩️ [flaky-fix] Responded:\nChange a.ts',
      asks,
      'flaky-fix went idle after its last turn: the test is green.',
    ];
    for (const text of once) assert.equal(chat().filter((t) => t === text).length, 1, `"${text}" sent once`);
    assert.deepEqual([...new Set(telegram.sent.map((m) => m.chatId))], [String(USER)]);
  });

  it('a single-turn session completes with its cost and a preview of its output, and the orchestrator hears of it', async () => {
    telegram.pushMessage({ fromId: USER, text: 'now run the suite once more' });
    const chat = (): string[] => textsTo(telegram, USER);
    const completed = await waitFor(
      'the completion',
      () => chat().find((t) => t.startsWith('✅ [suite-run] Completed')),
      LONG,
    );
    assert.match(completed, /💰 \$0\.0001/);
    assert.match(
      completed,
      /\n\nFAKE CLAUDE REPLY to: Run the test suite once and report$/,
      'the preview of what the agent said',
    );
    await waitFor(
      'the orchestrator to report it',
      () => chat().includes('suite-run completed: the test is green.'),
      LONG,
    );
  });

  it('refuses a sender who is not on the allow-list, and nothing reaches the engine', async () => {
    const before = model.completionRequests().length;
    const sessionsBefore = run.daemon.services.engine?.listSessions().length;
    const pushed = telegram.pushMessage({ fromId: STRANGER, text: 'fix the flaky test please' });
    await waitFor('the refusal', () => textsTo(telegram, STRANGER).length > 0, LONG);
    assert.match(textsTo(telegram, STRANGER)[0] ?? '', /not allowed to use this bot[\s\S]*777[\s\S]*allowedUserIds/);
    await telegram.waitFor(() => telegram.confirmedUpTo >= pushed.updateId, 'the refused update to be confirmed', LONG);
    assert.equal(
      run.daemon.services.engine?.listSessions().length,
      sessionsBefore,
      'no engine session for the stranger',
    );
    assert.ok(
      !run.daemon.services.engine
        ?.listSessions()
        .some((s) => s.descriptor.type === 'user' && s.descriptor.userId === String(STRANGER)),
    );
    assert.equal(model.completionRequests().length, before, 'the model was not asked');
    assert.deepEqual(unexpectedErrors(run.output()), [], 'no error lines in the daemon log');
  });
});

describe('Telegram chat commands with no inference provider', () => {
  const dir = tempDir('sb-e2e-tg-cmd-');
  const workdir = join(dir.path, 'work');
  let telegram: FakeTelegram;
  let run: LoggedDaemon;

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    telegram = await startFakeTelegram();
    run = await startLoggedDaemon(join(dir.path, 'home'), {
      workspaces: [dir.path],
      defaultWorkdir: workdir,
      'harnesses.claude.executable': FAKE_CLAUDE,
      'channels.telegram': telegramSection(telegram, [USER]),
      'channels.web.enabled': false,
    });
  });

  afterEach((t) => {
    if ((t as { passed?: boolean }).passed === false && run) console.log(diagnostics(telegram, [run.output()]));
  });

  after(async () => {
    await run?.daemon.stop();
    await telegram?.close();
    dir.remove();
  });

  it('/claude launches a session, /claude_sessions lists it, /claude_respond and /claude_kill reach it, without any model', async () => {
    assert.equal(run.daemon.config.inference.providers.length, 0);
    const chat = (): string[] => textsTo(telegram, USER);
    /** The bot's reply to one command message (commands are answered as replies to the message). */
    const replyTo = (messageId: number): Promise<string> =>
      waitFor(
        `the reply to message ${messageId}`,
        () => telegram.sent.find((m) => m.replyToMessageId === messageId)?.text,
        LONG,
      );

    const launch = telegram.pushMessage({ fromId: USER, text: '/claude --name quick-fix fix the typo in README' });
    assert.match(
      await replyTo(launch.messageId),
      /^↩️ \[quick-fix\] Launched \(claude\)\n[\s\S]*📝 "fix the typo in README"/,
    );
    // The session's own news reaches the chat the command came from (the launch itself is not repeated).
    await waitFor(
      'the session to wait for input',
      () => chat().includes('💬 [quick-fix] is waiting for input:\nFAKE CLAUDE REPLY to: fix the typo in README'),
      LONG,
    );
    assert.equal(chat().filter((t) => t.startsWith('↩️ [quick-fix] Launch')).length, 1, 'one launch line');

    const list = telegram.pushMessage({ fromId: USER, text: '/claude_sessions' });
    assert.match(await replyTo(list.messageId), /quick-fix/);

    const respond = telegram.pushMessage({ fromId: USER, text: '/claude_respond quick-fix also fix CHANGELOG' });
    assert.equal(await replyTo(respond.messageId), '↩️ [quick-fix] Responded:\nalso fix CHANGELOG');
    await waitFor(
      'the answer turn',
      () => chat().includes('💬 [quick-fix] is waiting for input:\nFAKE CLAUDE REPLY to: also fix CHANGELOG'),
      LONG,
    );

    const kill = telegram.pushMessage({ fromId: USER, text: '/claude_kill quick-fix' });
    assert.match(await replyTo(kill.messageId), /^⛔ \[quick-fix\] Killed/);
    assert.equal((await run.daemon.services.sessions.get('quick-fix')).status, 'killed');
    for (const text of ['↩️ [quick-fix] Responded:\nalso fix CHANGELOG'])
      assert.equal(chat().filter((t) => t === text).length, 1, `"${text}" sent once`);

    // A plain message needs the model: the engine answers with the seed's text.
    telegram.pushMessage({ fromId: USER, text: 'hello?' });
    await waitFor('the no-provider answer', () => chat().includes('No inference provider available.'), LONG);
    assert.equal(chat().filter((t) => t === 'No inference provider available.').length, 1);
    assert.deepEqual(unexpectedErrors(run.output()), [], 'no error lines in the daemon log');
  });
});

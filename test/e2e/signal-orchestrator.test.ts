// The Signal connector end to end on the real daemon, against the fake signal-cli daemon (JSON-RPC and its event
// stream): a Signal user asks the orchestrator (a scripted model behind the real AI SDK openai-compatible provider) for
// a fix; it launches a coding session (the fake Claude CLI, permissionMode 'default') whose messages go to the
// conversation (Signal has no threads): the launch line, the approval of its tool as a numbered list, decided by a
// reply of the number, the question it asks (its options numbered too), and the completion with its cost. A stranger
// is refused; a group gets its command answered in the group. Then a real daemon process SIGKILLed right after a
// message was acknowledged (its event id recorded: fault point `signal.after-accept`) loses nothing.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Daemon } from '../../src/main.ts';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import type { LoggedDaemon } from '../support/e2e-daemon.ts';
import { startLoggedDaemon } from '../support/e2e-daemon.ts';
import { chatInference, logLines, systemText, unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeSignalCli } from '../support/fake-signal-cli.ts';
import { startFakeSignalCli } from '../support/fake-signal-cli.ts';
import { flakyFixOrchestrator } from '../support/flaky-fix-orchestrator.ts';
import type { ChatBody, MockOpenAIChat } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText, startMockOpenAIChat } from '../support/mock-openai-chat.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const BOT = '+15550000001';
const USER = '+15554242000';
const STRANGER = '+15557770000';
const GROUP = 'c2lnbmFsLWdyb3VwLWlkLWZvci10ZXN0cw/+AB=';
/** Generous: two cores shared with other test files. */
const LONG = 60_000;

/** `channels.signal` for the fake daemon, answering only `allowed`; reconnects quickly. */
function signalSection(fake: FakeSignalCli, allowed: string[]): Record<string, unknown> {
  return {
    enabled: true,
    url: fake.url,
    account: BOT,
    allowedNumbers: allowed,
    retryBaseDelayMs: 50,
    retryMaxDelayMs: 200,
  };
}

/** What a failed test prints: the messages sent and the daemon's warnings and errors. */
function diagnostics(fake: FakeSignalCli, outputs: string[]): string {
  const chat = fake.sent.map((m) => `  → ${m.recipient ?? `group.${m.groupId}`}: ${JSON.stringify(m.message)}`);
  const logs = outputs.flatMap((o) =>
    logLines(o)
      .filter((l) => l.level >= 40)
      .map((l) => `    ${JSON.stringify(l)}`),
  );
  return `Signal messages sent:\n${chat.join('\n') || '  (none)'}\nDaemon log (warn and above):\n${logs.join('\n')}`;
}

/** The requests of the orchestrator's session for the user's conversation. */
function orchestratorRequests(mock: MockOpenAIChat): ChatBody[] {
  return mock
    .completionRequests()
    .map((r) => r.body as ChatBody)
    .filter((b) => systemText(b).includes(`serves the chat signal|${USER}`));
}

describe('Signal → orchestrator → coding session → numbered approval → completion', () => {
  const dir = tempDir('sb-e2e-signal-');
  const workdir = join(dir.path, 'src', 'app');
  let signal: FakeSignalCli;
  let model: MockOpenAIChat;
  let daemon: Daemon;
  let logged: LoggedDaemon | undefined;
  const output = (): string => logged?.output() ?? '';

  const orchestrator = flakyFixOrchestrator(workdir, 'I started flaky-fix; it will ask before it runs tools.');

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    signal = await startFakeSignalCli({ accounts: [BOT] });
    model = await startMockOpenAIChat({ handler: orchestrator });
    logged = await startLoggedDaemon(join(dir.path, 'home'), {
      workspaces: [dir.path],
      permissionMode: 'default',
      'harnesses.claude.executable': FAKE_CLAUDE,
      'channels.signal': signalSection(signal, [USER]),
      'channels.web.enabled': false,
      inference: chatInference(model.url),
    });
    daemon = logged.daemon;
    await waitFor('the event stream', () => signal.openStreams === 1, LONG);
  });

  afterEach((t) => {
    if ((t as { passed?: boolean }).passed === false) console.log(diagnostics(signal, [output()]));
  });

  after(async () => {
    await daemon?.stop();
    await signal?.close();
    await model?.close();
    dir.remove();
  });

  it('launches from a DM; the conversation gets the launch, the approval a number decides, the question and the cost', async () => {
    const chat = (): string[] => signal.textsTo(USER);
    const pushed = signal.push({ from: USER, text: `fix the flaky test in ${workdir} please` });

    // The orchestrator is asked, launches the session, and answers quoting the user's message.
    const first = await waitFor('the orchestrator to be asked', () => orchestratorRequests(model)[0], LONG);
    assert.match(lastUserText(first), /fix the flaky test/);
    const launch = await waitFor(
      'the launch line',
      () => chat().find((t) => t.startsWith('↩️ [flaky-fix] Launched')),
      LONG,
    );
    assert.match(launch, /^↩️ \[flaky-fix\] Launched:\n\[\[tool\]\] \[\[question\]\] Fix the flaky test in /);
    const reply = await waitFor(
      'the orchestrator reply',
      () => signal.sent.find((m) => m.message.startsWith('I started flaky-fix')),
      LONG,
    );
    assert.deepEqual([reply.quoteAuthor, reply.quoteTimestamp], [USER, pushed.timestamp], 'it quotes the request');
    const session = (await daemon.services.sessions.list()).find((s) => s.name === 'flaky-fix');
    assert.equal(session?.originChannel, `signal|${USER}`);

    // The approval comes as a numbered list; a reply of "2" is the "Allow for session" button.
    const approval = await waitFor('the approval', () => chat().find((t) => t.startsWith('🔐 [flaky-fix]')), LONG);
    assert.match(approval, /^🔐 \[flaky-fix\] wants to run Bash: echo hello-from-tool\n/);
    assert.ok(approval.endsWith('\n\n1 Allow · 2 Allow for session\n3 Always · 4 Deny'), approval);
    signal.push({ from: USER, text: '2' });
    // Signal cannot edit: the outcome comes as a new message.
    const outcome = await waitFor('the outcome', () => chat().find((t) => t.startsWith('✅ [flaky-fix] Bash')), LONG);
    assert.equal(outcome, `✅ [flaky-fix] Bash: echo hello-from-tool\n   allowed for this session by signal|${USER}`);

    // The question's options are numbered too; "1" picks a.ts.
    const question = await waitFor(
      'the question',
      () => chat().find((t) => t.startsWith('❓ [flaky-fix] asks:')),
      LONG,
    );
    assert.match(question, /Which file should I change\?[\s\S]*\n\n1 a\.ts\n2 b\.ts\n3 Deny$/);
    signal.push({ from: USER, text: '1' });
    await waitFor(
      'the answer',
      () => chat().some((t) => t.startsWith('✅ [flaky-fix] Which file should I change?') && t.endsWith('→ a.ts')),
      LONG,
    );

    // The single-turn session completes, with its cost, in the same conversation.
    const completed = await waitFor(
      'the completion',
      () => chat().find((t) => t.startsWith('✅ [flaky-fix] Completed')),
      LONG,
    );
    assert.match(completed, /💰 \$0\.0001/);
    const record = await daemon.services.sessions.get('flaky-fix');
    assert.equal(record.status, 'completed');
    for (const text of [launch, approval, outcome, question, completed])
      assert.equal(chat().filter((t) => t === text).length, 1, `"${text.slice(0, 40)}" sent once`);
    assert.deepEqual([...new Set(signal.sent.map((m) => m.recipient))], [USER], 'everything went to the DM');
  });

  it('answers a command in a group in the group', async () => {
    const pushed = signal.push({ from: USER, text: '/claude_sessions', groupId: GROUP });
    const answer = await waitFor(
      'the group answer',
      () => signal.sent.find((m) => m.groupId === GROUP && m.quoteTimestamp === pushed.timestamp),
      LONG,
    );
    assert.match(answer.message, /flaky-fix/);
  });

  it('refuses a stranger with their number; nothing reaches the engine', async () => {
    const sessionsBefore = daemon.services.engine?.listSessions().length;
    signal.push({ from: STRANGER, text: 'fix the flaky test please' });
    const refusal = await waitFor('the refusal', () => signal.textsTo(STRANGER)[0], LONG);
    assert.match(refusal, /not allowed to use this bot[\s\S]*\+15557770000[\s\S]*channels\.signal\.allowedNumbers/);
    // A later message of the user is handled, so the stranger's was done with before it.
    const next = signal.push({ from: USER, text: '/claude_sessions' });
    await waitFor('the next answer', () => signal.sent.find((m) => m.quoteTimestamp === next.timestamp), LONG);
    assert.equal(daemon.services.engine?.listSessions().length, sessionsBefore, 'no engine session for the stranger');
    // (The model may still be woken by the earlier test's session ending: only the stranger's text must never reach it.)
    const asked = model.completionRequests().some((r) => JSON.stringify(r.body).includes('fix the flaky test please'));
    assert.equal(asked, false, "the model never saw the stranger's message");
    assert.deepEqual(unexpectedErrors(output()), [], 'no error lines in the daemon log');
  });
});

describe('SIGKILL of the daemon right after a Signal message was acknowledged', () => {
  it('loses nothing: the message is answered once after the restart, and the stream resumes after it', async () => {
    const dir = tempDir('sb-crash-signal-');
    const home = join(dir.path, 'home');
    mkdirSync(home, { recursive: true });
    const signal = await startFakeSignalCli({ accounts: [BOT] });
    // The model answers only once the first run is dead, so the kill never falls in the outbox's own window (a send
    // to signal-cli not yet settled is sent again: at least once); this test is about the intake's acknowledgement.
    let firstGone: Promise<unknown> = new Promise(() => {});
    const model = await startMockOpenAIChat({
      handler: async (body) => {
        await firstGone;
        return chatText(lastUserText(body).includes('remember the milk') ? 'Noted: the milk.' : 'Noted.');
      },
    });
    const config = {
      workspaces: [dir.path],
      log: { level: 'info' },
      channels: { signal: signalSection(signal, [USER]), web: { enabled: false } },
      inference: chatInference(model.url),
      heartbeat: { intervalMinutes: 0 },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config, null, 2));
    // Keep the SWITCHBOARD_* settings of the environment out of the child: the config file alone decides.
    const clean: NodeJS.ProcessEnv = {};
    for (const key of Object.keys(process.env)) if (key.startsWith('SWITCHBOARD_')) clean[key] = undefined;
    const runs: DaemonProcess[] = [];
    try {
      const first = await startDaemonProcess(home, { ...clean, SWITCHBOARD_FAULT: 'signal.after-accept' }, 30_000);
      runs.push(first);
      firstGone = first.exited();
      await waitFor('the event stream', () => signal.openStreams === 1, LONG);
      const pushed = signal.push({ from: USER, text: 'remember the milk' });
      const exit = await first.exited();
      assert.equal(exit.signal, 'SIGKILL', first.output());
      assert.ok(first.output().includes('fault injected at signal.after-accept'));

      const second = await startDaemonProcess(home, clean, 30_000);
      runs.push(second);
      // The restarted connector names the event it acknowledged: signal-cli replays nothing before it.
      await waitFor('the second stream', () => signal.streamRequests.length === 2, LONG);
      assert.equal(signal.streamRequests[1]?.lastEventId, pushed.eventId);
      // The message was durable before the acknowledgement: the restarted engine answers it, once. (A turn the kill
      // cut off after it began is closed with the engine's cut-off answer instead; either way exactly one answer.)
      const answer = await waitFor(
        'the answer',
        () => signal.sent.find((m) => m.quoteTimestamp === pushed.timestamp),
        LONG,
      );
      assert.match(answer.message, /^(Noted: the milk\.|Internal error\.)$/);
      signal.push({ from: USER, text: '/claude_sessions' });
      await waitFor('a later command to be answered', () => signal.textsTo(USER).length >= 2, LONG);
      assert.equal(signal.sent.filter((m) => m.quoteTimestamp === pushed.timestamp).length, 1, 'answered once');
      second.child.kill('SIGTERM');
      assert.equal((await second.exited()).code, 0, second.output());
      assert.deepEqual(unexpectedErrors(second.output()), [], 'no error lines after the restart');
    } catch (error) {
      console.log(
        diagnostics(
          signal,
          runs.map((r) => r.output()),
        ),
      );
      throw error;
    } finally {
      for (const run of runs) await killDaemonProcess(run);
      await signal.close();
      await model.close();
      dir.remove();
    }
  });
});

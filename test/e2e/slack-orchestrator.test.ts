// The orchestrator path end to end on the real daemon (in this process) over Slack: a person DMs the app (fake Slack:
// Web API + Socket Mode WebSocket), the orchestrator (a scripted model behind the real AI SDK provider) launches a coding
// session (the fake Claude CLI, permissionMode default), and the session's thread (opened by its launch line) gets the
// approval with Block Kit buttons that a press decides (the message then edited through chat.update), the question, and
// the completion with its cost. The slash command runs a chat command; a stranger is refused and nothing of theirs
// reaches the engine.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Daemon } from '../../src/main.ts';
import { startDaemon } from '../../src/main.ts';
import type { LoggedDaemon } from '../support/e2e-daemon.ts';
import { startLoggedDaemon } from '../support/e2e-daemon.ts';
import { chatInference, logLines, systemText, unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeSlack, FakeSlackPost } from '../support/fake-slack.ts';
import { startFakeSlack } from '../support/fake-slack.ts';
import { eventCallback, messageEvent, postSigned } from '../support/fake-slack-payloads.ts';
import { flakyFixOrchestrator } from '../support/flaky-fix-orchestrator.ts';
import type { ChatBody, MockOpenAIChat } from '../support/mock-openai-chat.ts';
import { lastUserText, startMockOpenAIChat } from '../support/mock-openai-chat.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const USER = 'UOWNER';
const STRANGER = 'USTRANGER';
const DM = `D${USER}`;
/** Generous: two cores shared with other test files. */
const LONG = 60_000;

/** `channels.slack` for the app served by `fake` in Socket Mode. */
function slackSection(fake: FakeSlack, allowedUserIds: string[]): Record<string, unknown> {
  return {
    enabled: true,
    botToken: fake.botToken,
    appToken: fake.appToken,
    apiUrl: fake.apiUrl,
    allowedUserIds,
  };
}

describe('Slack → orchestrator → coding session in its thread → approval press → completion', () => {
  const dir = tempDir('sb-e2e-slack-');
  const workdir = join(dir.path, 'src', 'app');
  let slack: FakeSlack;
  let model: MockOpenAIChat;
  let daemon: Daemon;
  let logged: LoggedDaemon | undefined;
  const output = (): string => logged?.output() ?? '';

  const orchestrator = flakyFixOrchestrator(workdir, 'I started flaky-fix; approve its tool in the thread.');

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    slack = await startFakeSlack();
    model = await startMockOpenAIChat({ handler: orchestrator });
    logged = await startLoggedDaemon(join(dir.path, 'home'), {
      workspaces: [dir.path],
      permissionMode: 'default',
      'harnesses.claude.executable': FAKE_CLAUDE,
      'channels.slack': slackSection(slack, [USER]),
      'channels.web.enabled': false,
      inference: chatInference(model.url),
    });
    daemon = logged.daemon;
    await waitFor('the Socket Mode connection', () => slack.socket.connections > 0, LONG);
  });

  afterEach((t) => {
    if ((t as { passed?: boolean }).passed === false) {
      console.log(
        slack.posts.map((p) => `  → ${p.channel} [${p.threadTs ?? '-'}] ${JSON.stringify(p.text)}`).join('\n'),
      );
      console.log(
        logLines(output())
          .filter((l) => l.level >= 40)
          .map((l) => JSON.stringify(l))
          .join('\n'),
      );
    }
  });

  after(async () => {
    await daemon?.stop();
    await slack?.close();
    await model?.close();
    dir.remove();
  });

  it('launches from a DM; the session thread gets the approval a press decides, the question and the completion with cost', async () => {
    const pushed = slack.pushMessage({ user: USER, text: `fix the flaky test in ${workdir} please` });
    await waitFor('the DM to be acknowledged', () => slack.socket.ackOf(pushed.envelopeId), LONG);
    const first = await waitFor(
      'the orchestrator to be asked',
      () =>
        model
          .completionRequests()
          .map((r) => r.body as ChatBody)
          .find((b) => systemText(b).includes(`slack|${DM}`)),
      LONG,
    );
    assert.match(lastUserText(first), /fix the flaky test/);

    const dmPosts = (): FakeSlackPost[] => slack.posts.filter((p) => p.channel === DM);
    const launch = await waitFor(
      'the launch line',
      () => dmPosts().find((p) => p.text.startsWith('↩️ [flaky-fix] Launched')),
      LONG,
    );
    assert.equal(launch.threadTs, undefined, 'the launch line opens the thread');
    const inThread = (): FakeSlackPost[] => dmPosts().filter((p) => p.threadTs === launch.ts);

    const request = await waitFor(
      'the approval in the thread',
      () => inThread().find((p) => p.buttons.length > 0),
      LONG,
    );
    assert.match(request.text, /^🔐 \[[^\]]+\] wants to run Bash: echo hello-from-tool/);
    assert.deepEqual(
      request.buttons.flat().map((b) => b.label),
      ['Allow', 'Allow for session', 'Always', 'Deny'],
    );
    const press = slack.press(USER, request, 'Allow for session');
    await waitFor('the press to be acknowledged', () => slack.socket.ackOf(press), LONG);
    const edited = await waitFor('the approval edited', () => slack.updates.find((u) => u.ts === request.ts), LONG);
    assert.match(
      edited.text,
      new RegExp(`^✅ .*Bash: echo hello-from-tool\\n\\s+allowed for this session by slack\\|${USER}`),
    );
    assert.deepEqual(edited.buttons, [], 'the buttons are gone');

    const question = await waitFor(
      'the question in the thread',
      () => inThread().find((p) => p.text.includes('Which file should I change?')),
      LONG,
    );
    // The question is answered from the thread, by the number of its option.
    const asked = /Answer: (\/approve \S+) <number>/.exec(question.text);
    assert.ok(asked, question.text);
    const reply = slack.pushMessage({ user: USER, text: `${asked[1]} 1`, threadTs: launch.ts });
    await waitFor('the answer to be acknowledged', () => slack.socket.ackOf(reply.envelopeId), LONG);

    const completed = await waitFor(
      'the completion in the thread',
      () => inThread().find((p) => p.text.startsWith('✅ [flaky-fix] Completed')),
      LONG,
    );
    assert.match(completed.text, /💰 \$0\.000/);
    const session = (await daemon.services.sessions.list()).find((s) => s.name === 'flaky-fix');
    assert.equal(session?.originChannel, `slack|${DM}`);
    await waitFor(
      'the orchestrator reply in the DM',
      () => dmPosts().find((p) => p.text === 'I started flaky-fix; approve its tool in the thread.'),
      LONG,
    );
    // Every message of the session after its launch line went in its thread.
    for (const text of ['✅ [flaky-fix] Bash', '❓ [flaky-fix] asks', '✅ [flaky-fix] Completed'])
      assert.ok(
        dmPosts()
          .filter((p) => p.text.startsWith(text))
          .every((p) => p.threadTs === launch.ts),
        `"${text}" in the thread`,
      );
  });

  it('/switchboard <command> runs the chat command without the model', async () => {
    const posted = slack.posts.length;
    const envelope = slack.pushCommand(USER, 'claude_sessions');
    await waitFor('the command to be acknowledged', () => slack.socket.ackOf(envelope), LONG);
    const list = await waitFor(
      'the session list',
      () => slack.posts.slice(posted).find((p) => p.channel === DM && p.text.includes('flaky-fix')),
      LONG,
    );
    assert.equal(list.threadTs, undefined, 'answered in the conversation the command came from');
    assert.ok(
      !model.completionRequests().some((r) => lastUserText(r.body as ChatBody).includes('claude_sessions')),
      'the model was not asked',
    );
  });

  it('refuses a stranger, and nothing reaches the engine', async () => {
    const before = model.completionRequests().length;
    const sessions = daemon.services.engine?.listSessions().length;
    const pushed = slack.pushMessage({ user: STRANGER, text: 'fix the flaky test please' });
    await waitFor('the stranger acknowledged', () => slack.socket.ackOf(pushed.envelopeId), LONG);
    assert.match(
      slack.textsIn(`D${STRANGER}`)[0] ?? '',
      /not allowed[\s\S]*USTRANGER[\s\S]*channels\.slack\.allowedUserIds/,
    );
    assert.equal(daemon.services.engine?.listSessions().length, sessions);
    assert.ok(
      !model
        .completionRequests()
        .slice(before)
        .some((r) => systemText(r.body as ChatBody).includes(`D${STRANGER}`)),
      'the model was not asked for the stranger',
    );
    assert.deepEqual(unexpectedErrors(output()), [], 'no error lines in the daemon log');
  });
});

describe('Slack over the Events API: POST /slack/events on the daemon gateway', () => {
  const dir = tempDir('sb-e2e-slack-http-');
  const secret = 'e2e-signing-secret';
  let slack: FakeSlack;
  let daemon: Daemon;

  before(async () => {
    slack = await startFakeSlack();
    daemon = await startDaemon({
      home: join(dir.path, 'home'),
      env: { SLACK_SIGNING_SECRET: secret },
      overrides: {
        'gateway.port': 0,
        'log.level': 'silent',
        workspaces: [dir.path],
        'channels.slack': { ...slackSection(slack, [USER]), mode: 'http' },
        'channels.web.enabled': false,
      },
    });
  });

  after(async () => {
    await daemon?.stop();
    await slack?.close();
    dir.remove();
  });

  it('a signed DM command is answered; a forged or replayed one is refused with 401', async () => {
    const url = `${daemon.url}/slack/events`;
    const ts = slack.nextTs();
    const post = {
      kind: 'event' as const,
      body: eventCallback(messageEvent({ user: USER, text: ' /claude_sessions' }, ts), 'Ev1'),
    };
    const forged = await postSigned(url, 'wrong-secret', post);
    assert.equal(forged.status, 401);
    const accepted = await postSigned(url, secret, post);
    assert.equal(accepted.status, 200);
    const replayed = await postSigned(url, secret, post, {
      timestamp: accepted.timestamp,
      signature: accepted.signature,
    });
    assert.equal(replayed.status, 401);
    await waitFor('the answer', () => slack.textsIn(DM).length > 0, LONG);
    assert.equal(slack.textsIn(DM).length, 1, 'answered once');
    assert.match(slack.textsIn(DM)[0] ?? '', /session/i);
  });
});

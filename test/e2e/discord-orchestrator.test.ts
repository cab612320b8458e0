// The orchestrator path end to end on the real daemon (in this process) from Discord (the fake Discord's REST and
// Gateway, discord.js pointed at them): a person mentions the bot in a guild channel, the orchestrator (a scripted model
// behind the real AI SDK openai-compatible provider) launches a coding session (the fake Claude CLI, permission mode
// default) that runs a tool and asks a question; the session's messages (launch line, the approval with its buttons,
// the question with its options, the completion with its cost) reach the conversation, where presses decide them.
// Then slash commands, a stranger refused, and (a real daemon process) a SIGKILL right after a message was accepted.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { crashRig } from '../support/crash-rig.ts';
import type { LoggedDaemon } from '../support/e2e-daemon.ts';
import { startLoggedDaemon } from '../support/e2e-daemon.ts';
import { chatInference, logLines, systemText, unexpectedErrors } from '../support/e2e-daemon.ts';
import type { FakeDiscord, FakeMessage } from '../support/fake-discord.ts';
import { startFakeDiscord } from '../support/fake-discord.ts';
import { discordSection, discordTranscript } from '../support/fake-discord-e2e.ts';
import { flakyFixOrchestrator } from '../support/flaky-fix-orchestrator.ts';
import type { ChatBody, MockOpenAIChat } from '../support/mock-openai-chat.ts';
import { chatText, lastUserText, startMockOpenAIChat } from '../support/mock-openai-chat.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const FAKE_CLAUDE = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const USER = '400000000000000042';
const STRANGER = '400000000000000777';
/** Generous: two cores shared with other test files. */
const LONG = 60_000;
/** What the crash test's message may be answered with. */
const ANSWERS = ['Yes, I am here.', 'Internal error.'];

function diagnostics(fake: FakeDiscord, output: string): string {
  const logs = logLines(output)
    .filter((l) => l.level >= 40)
    .map((l) => `    ${JSON.stringify(l)}`)
    .join('\n');
  return `Discord messages sent:\n${discordTranscript(fake)}\nDaemon log (warn and above):\n${logs}`;
}

describe('Discord → orchestrator → coding session → approvals by button → completion', { timeout: 240_000 }, () => {
  const dir = tempDir('sb-e2e-discord-');
  const workdir = join(dir.path, 'src', 'app');
  let discord: FakeDiscord;
  let model: MockOpenAIChat;
  let run: LoggedDaemon;

  /** The orchestrator as scripted here. */
  const orchestrator = flakyFixOrchestrator(workdir, 'I started flaky-fix on it.');

  before(async () => {
    mkdirSync(workdir, { recursive: true });
    discord = await startFakeDiscord();
    model = await startMockOpenAIChat({ handler: orchestrator });
    run = await startLoggedDaemon(join(dir.path, 'home'), {
      workspaces: [dir.path],
      permissionMode: 'default',
      'harnesses.claude.executable': FAKE_CLAUDE,
      'channels.discord': discordSection(discord, [USER]),
      'channels.web.enabled': false,
      inference: chatInference(model.url),
    });
  });

  afterEach((t) => {
    if ((t as { passed?: boolean }).passed === false && run) console.log(diagnostics(discord, run.output()));
  });

  after(async () => {
    await run?.daemon.stop();
    await discord?.close();
    await model?.close();
    dir.remove();
  });

  /** The bot's messages in the thread the session's launch line started. */
  function threadMessages(launch: FakeMessage): FakeMessage[] {
    return discord.sent.filter((m) => m.channelId === launch.id);
  }

  it('launches from a mention; the approval and the question are decided by presses; the completion has its cost', async () => {
    discord.userMessage({
      userId: USER,
      channelId: discord.channelId,
      content: `fix the flaky test in ${workdir} please`,
      mention: true,
    });
    const asked = await waitFor(
      'the orchestrator to be asked',
      () => model.completionRequests().find((r) => systemText(r.body as ChatBody).includes('discord|')),
      LONG,
    );
    assert.match(systemText(asked.body as ChatBody), new RegExp(`discord\\|${discord.channelId}`));

    const launch = await waitFor(
      'the launch line',
      () => discord.sent.find((m) => m.content.startsWith('↩️ [flaky-fix] Launched')),
      LONG,
    );
    assert.equal(launch.channelId, discord.channelId, 'the launch line is in the channel');
    const session = (await run.daemon.services.sessions.list()).find((s) => s.name === 'flaky-fix');
    assert.equal(session?.originChannel, `discord|${discord.channelId}`);

    // The approval, with its buttons as components; a press of "Allow" decides it and the message is edited.
    const approval = await waitFor(
      'the approval with buttons',
      () => threadMessages(launch).find((m) => m.content.startsWith('🔐') && m.buttons.length > 0),
      LONG,
    );
    assert.match(approval.content, /wants to run Bash: echo hello-from-tool/);
    const labels = approval.buttons.flat().map((b) => b.label);
    assert.deepEqual(labels, ['Allow', 'Allow for session', 'Always', 'Deny']);
    const allow = approval.buttons.flat()[0]?.customId as string;
    const press = discord.press({ userId: USER }, approval.id, allow);
    await waitFor('the press acknowledged', () => press.callbacks.length > 0, LONG);
    assert.equal(press.callbacks[0]?.type, 6, 'a deferred update');
    await waitFor(
      'the approval edited',
      () => discord.edits.find((e) => e.messageId === approval.id && e.buttons.length === 0),
      LONG,
    );

    // The question, with its options as buttons; a press answers it.
    const question = await waitFor(
      'the question with its options',
      () =>
        threadMessages(launch).find((m) => m.content.includes('Which file should I change?') && m.buttons.length > 0),
      LONG,
    );
    const option = question.buttons.flat().find((b) => b.label.includes('a.ts'));
    assert.ok(option, `an a.ts button in ${JSON.stringify(question.buttons)}`);
    discord.press({ userId: USER }, question.id, option.customId);

    const completed = await waitFor(
      'the completion',
      () => threadMessages(launch).find((m) => m.content.startsWith('✅ [flaky-fix] Completed')),
      LONG,
    );
    assert.match(completed.content, /💰 \$0\.0001/);
    // Everything of the session after its launch line went in the thread started from that line.
    assert.deepEqual(
      discord.threads.map((t) => [t.id, t.parentId]),
      [[launch.id, discord.channelId]],
    );
    assert.ok(!discord.textsIn(discord.channelId).some((t) => /^(🔐|✅ \[flaky-fix\])/.test(t)));
    assert.equal((await run.daemon.services.sessions.get('flaky-fix')).status, 'completed');
    assert.deepEqual(unexpectedErrors(run.output()), [], 'no error lines in the daemon log');
  });

  it('a slash command runs with no model and its reply fills the deferred response', async () => {
    const command = discord.slash({ userId: USER, channelId: discord.channelId, name: 'claude_sessions' });
    await waitFor('the deferral', () => command.callbacks.length > 0, LONG);
    assert.equal(command.callbacks[0]?.type, 5);
    const reply = await waitFor(
      'the response filled',
      () => discord.sent.find((m) => m.id === command.originalId),
      LONG,
    );
    assert.match(reply.content, /flaky-fix/);
    assert.ok(
      !model.completionRequests().some((r) => lastUserText(r.body as ChatBody).includes('claude_sessions')),
      'the model was not asked',
    );
  });

  it('refuses a stranger in a DM and by slash command, and nothing reaches the engine', async () => {
    const sessionsBefore = run.daemon.services.engine?.listSessions().length;
    const message = discord.userMessage({ userId: STRANGER, content: 'fix the flaky test please' });
    const refusal = await waitFor('the refusal', () => discord.sent.find((m) => m.replyTo === message.id), LONG);
    assert.match(
      refusal.content,
      new RegExp(`not allowed[\\s\\S]*${STRANGER}[\\s\\S]*channels\\.discord\\.allowedUserIds`),
    );
    const command = discord.slash({ userId: STRANGER, channelId: discord.channelId, name: 'claude', args: 'rm -rf' });
    await waitFor('the ephemeral refusal', () => command.callbacks.length > 0, LONG);
    assert.equal(command.callbacks[0]?.ephemeral, true);
    assert.equal(run.daemon.services.engine?.listSessions().length, sessionsBefore, 'no engine session');
    // (The model may still be woken by an earlier test's session ending: only the stranger's text must never reach it.)
    const asked = model.completionRequests().some((r) => JSON.stringify(r.body).includes('fix the flaky test please'));
    assert.equal(asked, false, "the model never saw the stranger's message");
  });
});

describe('Discord: a SIGKILL right after a message was accepted loses nothing', { timeout: 240_000 }, () => {
  it('an accepted message is answered after the restart, and an acknowledged command is replied to', async () => {
    const discord = await startFakeDiscord();
    const rig = await crashRig(
      'sb-e2e-discord-crash-',
      (body) => (lastUserText(body).includes('are you there') ? chatText('Yes, I am here.') : chatText('Noted.')),
      {},
    );
    try {
      rig.configure({ channels: { discord: discordSection(discord, [USER]), web: { enabled: false } } });
      await rig.start({ SWITCHBOARD_FAULT: 'discord.intake.after-ack' });
      await waitFor('the bot to connect', () => discord.gateway.ready > 0, LONG);
      const message = discord.userMessage({ userId: USER, content: 'are you there?' });
      await rig.crashed('discord.intake.after-ack');
      assert.equal(discord.sent.filter((m) => m.replyTo === message.id).length, 0, 'not answered before the crash');

      await rig.start();
      // The turn may have begun before the kill: then the restart closes it with "Internal error." (engine rules);
      // either way the accepted message gets exactly one answer.
      const answers = (): FakeMessage[] =>
        discord.sent.filter((m) => m.channelId === message.channelId && ANSWERS.includes(m.content));
      await waitFor('the answer after the restart', () => answers().length > 0, LONG);
      assert.equal(answers().length, 1, 'answered once');
      assert.deepEqual(unexpectedErrors(rig.daemon.output()), []);
      await rig.stop();

      // A slash command acknowledged (deferred) right before the kill: its reply, already in the outbox, arrives
      // after the restart as a message of its own (the interaction's token died with the process).
      await rig.start({ SWITCHBOARD_FAULT: 'discord.intake.after-ack' });
      await waitFor('the bot to connect again', () => discord.gateway.ready > 0, LONG);
      const before = discord.textsIn(discord.channelId).length;
      const command = discord.slash({ userId: USER, channelId: discord.channelId, name: 'claude_stats' });
      await rig.crashed('discord.intake.after-ack');
      assert.equal(command.callbacks[0]?.type, 5, 'deferred before the kill');
      await rig.start();
      await waitFor('the reply after the restart', () => discord.textsIn(discord.channelId).length > before, LONG);
      assert.equal(discord.textsIn(discord.channelId).length, before + 1, 'one reply');
      assert.deepEqual(unexpectedErrors(rig.daemon.output()), []);
      await rig.stop();
    } catch (error) {
      console.log(discordTranscript(discord));
      for (const r of rig.runs) console.log(r.output().split('\n').slice(-40).join('\n'));
      throw error;
    } finally {
      await rig.close();
      await discord.close();
    }
  });
});

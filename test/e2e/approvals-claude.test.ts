// Approvals end to end: the real daemon process running the real Claude Code binary (bundled with the Agent SDK)
// against the mock Messages API, in a project whose settings make Bash ask. A request is listed and allowed for the
// session, the next Bash call of the kind runs without asking, a deny's message reaches the model as the tool error, a
// timeout denies, and a SIGKILL with a request pending cancels it on restart while resuming the session asks again.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Approval } from '../../src/approvals/approval.ts';
import { bundledClaudeExecutable } from '../../src/coding/claude/claude-harness.ts';
import type { DaemonProcess } from '../support/daemon-process.ts';
import { killDaemonProcess, startDaemonProcess } from '../support/daemon-process.ts';
import type { MessagesBody, MockAnthropic } from '../support/mock-anthropic.ts';
import {
  defaultReply,
  lastUserMessage,
  startMockAnthropic,
  toolUseReply,
  userTexts,
} from '../support/mock-anthropic.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const BINARY = bundledClaudeExecutable();
const skip =
  BINARY && existsSync(BINARY) ? false : 'the Claude Code binary of @anthropic-ai/claude-agent-sdk is missing';

/** `RUN: <command>` in the newest user text makes the model call Bash with it; a resume repeats the last one. */
function handler(body: MessagesBody) {
  const last = lastUserMessage(body);
  const texts = userTexts(last).join('\n');
  const run = /RUN: (.+)/.exec(texts);
  if (run?.[1]) return toolUseReply('Bash', { command: run[1].trim(), description: 'run it' });
  if (texts.includes('Continue where you left off'))
    return toolUseReply('Bash', { command: 'ls -a', description: 'again' });
  return defaultReply(body);
}

/** The tool_result blocks the model was sent (what the agent got back for its tool calls). */
function toolResults(mock: MockAnthropic): { content: string; isError: boolean }[] {
  const out: { content: string; isError: boolean }[] = [];
  for (const request of mock.messageRequests()) {
    const last = lastUserMessage(request.body as MessagesBody);
    const blocks = Array.isArray(last?.content) ? (last.content as Record<string, unknown>[]) : [];
    for (const b of blocks) {
      if (b.type !== 'tool_result') continue;
      const content = Array.isArray(b.content)
        ? (b.content as { text?: string }[]).map((c) => c.text ?? '').join('')
        : String(b.content ?? '');
      out.push({ content, isError: b.is_error === true });
    }
  }
  return out;
}

describe('approvals with the real Claude Code binary', { skip, timeout: 240_000 }, () => {
  let mock: MockAnthropic;
  let dir: { path: string; remove: () => void };
  let home: string;
  let workdir: string;
  let daemon: DaemonProcess | null = null;

  before(async () => {
    mock = await startMockAnthropic({ handler });
    dir = tempDir('sb-approvals-');
    home = join(dir.path, 'home');
    workdir = join(dir.path, 'repo');
    const agentHome = join(dir.path, 'agent-home');
    for (const d of [home, workdir, join(workdir, '.claude'), agentHome]) mkdirSync(d, { recursive: true });
    // The project's own rule: Bash asks.
    writeFileSync(join(workdir, '.claude', 'settings.json'), JSON.stringify({ permissions: { ask: ['Bash'] } }));
    const config = {
      workspaces: [dir.path],
      approvals: { timeoutMinutes: 0.05 },
      harnesses: {
        claude: {
          settingSources: ['project'],
          env: {
            HOME: agentHome,
            CLAUDE_CONFIG_DIR: join(agentHome, '.claude'),
            ANTHROPIC_BASE_URL: mock.url,
            ANTHROPIC_API_KEY: 'sk-ant-test',
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          },
        },
      },
      channels: { web: { enabled: false } },
    };
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config), { mode: 0o600 });
    daemon = await startDaemonProcess(home);
  });

  after(async () => {
    await killDaemonProcess(daemon);
    await mock?.close();
    dir?.remove();
  });

  const rpc = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> => {
    if (!daemon) throw new Error('no daemon');
    return daemon.rpc<T>(method, params);
  };
  const approvals = async (status?: string): Promise<Approval[]> =>
    (await rpc<{ approvals: Approval[] }>('approvals.list', status ? { status } : {})).approvals;
  const pending = (): Promise<Approval> => waitFor('a pending approval', async () => (await approvals('pending'))[0]);

  let sessionId = '';

  it('a request is listed with who asks; allowed for the session, the next Bash call of the kind does not ask', async () => {
    const launched = await rpc<{ id: string }>('sessions.launch', {
      prompt: 'RUN: echo one',
      name: 'fix-parser',
      workdir,
      permissionMode: 'default',
    });
    sessionId = launched.id;
    const first = await pending();
    assert.equal(first.tool, 'Bash');
    assert.equal(first.summary, 'Bash: echo one');
    assert.equal(first.session, 'fix-parser');
    const shown = await rpc<{ pendingApproval?: Approval; waitingFor: string | null }>('sessions.get', {
      session: sessionId,
    });
    assert.equal(shown.pendingApproval?.id, first.id);
    const decided = await rpc<{ outcome: string; approval: Approval }>('approvals.decide', {
      id: first.id,
      decision: 'allow-session',
    });
    assert.equal(decided.outcome, 'decided');
    assert.equal(decided.approval.decidedBy, 'rpc');
    await waitFor('the command to run', () => toolResults(mock).some((r) => r.content.includes('one')));
    const again = await rpc<{ outcome: string }>('approvals.decide', { id: first.id, decision: 'deny' });
    assert.equal(again.outcome, 'already');

    await waitFor(
      'the turn to end',
      async () =>
        (await rpc<{ waitingFor: string | null }>('sessions.get', { session: sessionId })).waitingFor === 'turn-end',
    );
    await rpc('sessions.send', { session: sessionId, message: 'RUN: echo two --loud' });
    await waitFor('the second command to run', () => toolResults(mock).some((r) => r.content.includes('two --loud')));
    const byRule = (await approvals()).find((a) => a.summary === 'Bash: echo two --loud');
    assert.equal(byRule?.status, 'allowed');
    assert.match(byRule?.decidedBy ?? '', /^rule:/);
  });

  it('a deny with a message reaches the model as the tool error', async () => {
    await waitFor(
      'the turn to end',
      async () =>
        (await rpc<{ waitingFor: string | null }>('sessions.get', { session: sessionId })).waitingFor === 'turn-end',
    );
    await rpc('sessions.send', { session: sessionId, message: 'RUN: rm -f precious.txt' });
    const request = await pending();
    assert.equal(request.summary, 'Bash: rm -f precious.txt');
    await rpc('approvals.decide', { id: request.id, decision: 'deny', message: 'keep precious.txt' });
    const result = await waitFor('the denial to reach the model', () =>
      toolResults(mock).find((r) => r.content.includes('keep precious.txt')),
    );
    assert.equal(result.isError, true);
  });

  it('an unanswered request is denied by the timeout', async () => {
    await waitFor(
      'the turn to end',
      async () =>
        (await rpc<{ waitingFor: string | null }>('sessions.get', { session: sessionId })).waitingFor === 'turn-end',
    );
    await rpc('sessions.send', { session: sessionId, message: 'RUN: touch later.txt' });
    const request = await pending();
    const expired = await waitFor('the timeout', async () =>
      (await approvals('expired')).find((a) => a.id === request.id),
    );
    assert.equal(expired.decidedBy, 'timeout');
    const result = await waitFor('the timeout to reach the model', () =>
      toolResults(mock).find((r) => r.content.includes('No answer within')),
    );
    assert.equal(result.isError, true);
  });

  it('a crash with a request pending cancels it on restart; resuming the session asks again', async () => {
    await waitFor(
      'the turn to end',
      async () =>
        (await rpc<{ waitingFor: string | null }>('sessions.get', { session: sessionId })).waitingFor === 'turn-end',
    );
    await rpc('sessions.send', { session: sessionId, message: 'RUN: ls -a' });
    const request = await pending();
    await killDaemonProcess(daemon);
    daemon = await startDaemonProcess(home);
    const cancelled = (await approvals('cancelled')).find((a) => a.id === request.id);
    assert.equal(cancelled?.decidedBy, 'restart');
    assert.match(cancelled?.message ?? '', /daemon restarted/);
    await rpc('sessions.resume', { session: sessionId });
    const asked = await pending();
    assert.notEqual(asked.id, request.id);
    assert.equal(asked.summary, 'Bash: ls -a');
    await rpc('approvals.decide', { id: asked.id, decision: 'allow' });
    await waitFor('the command to run after the resume', () =>
      toolResults(mock).some((r) => !r.isError && r.content.includes('.claude')),
    );
  });
});

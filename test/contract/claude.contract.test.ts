// Contract: the real Claude Code binary bundled with @anthropic-ai/claude-agent-sdk, driven through createClaudeHarness,
// against the local mock Messages API. A protocol change in a new SDK/CLI version shows up here.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { bundledClaudeExecutable, createClaudeHarness } from '../../src/coding/claude/claude-harness.ts';
import type { HarnessEvent, Run, RunSpec } from '../../src/coding/harness.ts';
import { drive, exitedOf, ofType } from '../support/harness-run.ts';
import type { MockAnthropic } from '../support/mock-anthropic.ts';
import { startMockAnthropic, textReply, toolUseReply } from '../support/mock-anthropic.ts';
import { tempDir } from '../support/temp-dir.ts';
import { waitFor } from '../support/wait-for.ts';

const BINARY = bundledClaudeExecutable();
const MARKER = 'SWITCHBOARD-APPEND-MARKER-7f3a';

let mock: MockAnthropic;
let home: { path: string; remove: () => void };
let workdir: string;

beforeEach(async () => {
  mock = await startMockAnthropic();
  home = tempDir('sb-claude-');
  workdir = join(home.path, 'project');
  mkdirSync(workdir);
});

afterEach(async () => {
  await mock.close();
  home.remove();
});

function skipWithoutBinary(t: TestContext): boolean {
  if (BINARY && existsSync(BINARY)) return false;
  t.skip('the Claude Code binary bundled with @anthropic-ai/claude-agent-sdk is not installed');
  return true;
}

function start(prompt: string, extra: Partial<RunSpec> = {}): Run {
  const harness = createClaudeHarness({ config: { settingSources: [], env: {} }, killGraceMs: 3_000 });
  return harness.start({
    sessionId: 'sb-contract',
    prompt,
    workdir,
    permissionMode: 'bypassPermissions',
    env: {
      HOME: home.path,
      CLAUDE_CONFIG_DIR: join(home.path, '.claude'),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      // We run as root: Claude Code refuses bypassPermissions under root without it.
      IS_SANDBOX: '1',
    },
    ...extra,
  });
}

describe('Claude Code contract (real binary, mock Messages API)', { timeout: 60_000 }, () => {
  it('one turn with a Bash tool call: tool → toolResult → text → turnEnd ok; the system prompt is appended', async (t) => {
    if (skipWithoutBinary(t)) return;
    const events = await drive(start('please USE_TOOL now', { systemPrompt: MARKER }));
    const [started] = ofType(events, 'started');
    assert.match(started?.backendSessionId ?? '', /^[0-9a-f-]{36}$/);
    const [tool] = ofType(events, 'tool');
    assert.equal(tool?.name, 'Bash');
    assert.deepEqual(tool?.input, { command: 'echo hello-from-tool', description: 'echo' });
    const [result] = ofType(events, 'toolResult');
    assert.deepEqual(result, { type: 'toolResult', id: tool?.id, isError: false, output: 'hello-from-tool' });
    assert.deepEqual(ofType(events, 'text').at(-1), { type: 'text', text: 'tool said: hello-from-tool' });
    const [end, ...more] = ofType(events, 'turnEnd');
    assert.equal(more.length, 0);
    assert.deepEqual(end?.outcome, { ok: true, result: 'tool said: hello-from-tool' });
    assert.ok((end?.costUsd ?? 0) > 0);
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
    const first = mock.messageRequests()[0];
    assert.equal(first?.query, 'beta=true');
    const system = JSON.stringify((first?.body as { system?: unknown }).system ?? '');
    assert.ok(system.includes(MARKER), 'the append reached the model');
    assert.ok(system.length > MARKER.length * 20, "Claude Code's own system prompt is still there");
  });

  it('resume continues the session: same backend id, earlier history sent again', async (t) => {
    if (skipWithoutBinary(t)) return;
    const first = await drive(start('remember the word PINEAPPLE'));
    const id = ofType(first, 'started')[0]?.backendSessionId;
    assert.ok(id);
    assert.equal(exitedOf(first).code, 0);
    const before = mock.messageRequests().length;
    const second = await drive(start('what was the word?', { resumeBackendId: id }));
    assert.deepEqual(new Set(ofType(second, 'started').map((e) => e.backendSessionId)), new Set([id]));
    assert.deepEqual(ofType(second, 'turnEnd')[0]?.outcome, { ok: true, result: 'MOCK REPLY to: what was the word?' });
    const resumed = mock.messageRequests().slice(before);
    assert.ok(resumed.length > 0);
    const history = JSON.stringify((resumed.at(-1)?.body as { messages?: unknown }).messages);
    assert.ok(history.includes('remember the word PINEAPPLE'), 'the resumed request carries the first turn');
    assert.ok(history.includes('MOCK REPLY to: remember the word PINEAPPLE'));
    assert.equal(exitedOf(second).code, 0);
  });

  it('an HTTP 400 from the API ends the turn as api_error 400 and the run exits', async (t) => {
    if (skipWithoutBinary(t)) return;
    // No reaction: the run exits on its own after the failed turn.
    const events = await drive(start('please API_ERROR now'), () => undefined);
    const [end, ...more] = ofType(events, 'turnEnd');
    assert.equal(more.length, 0);
    assert.equal(end?.outcome.ok, false);
    assert.deepEqual(end?.outcome, {
      ok: false,
      reason: 'api_error',
      message: 'API Error: 400 mock bad request',
      apiErrorStatus: 400,
    });
    const exited = exitedOf(events);
    assert.equal(exited.code, 1);
    assert.equal(exited.error, undefined, 'the failure was reported by the turn, not as a crash');
  });

  it('interrupt mid-answer ends the turn as interrupted and the session takes the next message', async (t) => {
    if (skipWithoutBinary(t)) return;
    mock.enqueue(textReply('a slow answer that streams for a long time', { chunkDelayMs: 1_500 }));
    const run = start('tell me slowly');
    const events: HarnessEvent[] = [];
    let turns = 0;
    for await (const event of run) {
      events.push(event);
      if (event.type === 'started' && ofType(events, 'started').length === 1) {
        await waitFor('the model to be asked', () => mock.messageRequests().length > 0, 10_000);
        await run.interrupt();
        run.send('and now quickly');
      }
      if (event.type === 'turnEnd' && ++turns === 2) run.end();
    }
    const ends = ofType(events, 'turnEnd');
    assert.equal(ends.length, 2);
    assert.deepEqual(ends[0]?.outcome, { ok: false, reason: 'interrupted', message: 'interrupted by the user' });
    assert.deepEqual(ends[1]?.outcome, { ok: true, result: 'MOCK REPLY to: and now quickly' });
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
  });

  it('outside bypassPermissions a tool that needs approval asks through a permission event', async (t) => {
    if (skipWithoutBinary(t)) return;
    mock.enqueue(toolUseReply('Bash', { command: 'touch made-by-tool.txt', description: 'touch' }));
    const run = start('make a file', { permissionMode: 'default' });
    const events: HarnessEvent[] = [];
    for await (const event of run) {
      events.push(event);
      if (event.type === 'permission') run.answerPermission(event.requestId, { allow: true });
      if (event.type === 'turnEnd') run.end();
    }
    const [permission] = ofType(events, 'permission');
    assert.equal(permission?.tool, 'Bash');
    assert.deepEqual(permission?.input, { command: 'touch made-by-tool.txt', description: 'touch' });
    assert.equal(ofType(events, 'toolResult')[0]?.isError, false);
    assert.ok(existsSync(join(workdir, 'made-by-tool.txt')), 'the approved tool ran');
    assert.equal(ofType(events, 'turnEnd')[0]?.outcome.ok, true);
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
  });
});

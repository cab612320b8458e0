// The Claude harness driven end to end through the Agent SDK against test/support/fake-claude.mjs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createClaudeHarness } from '../../src/coding/claude/claude-harness.ts';
import type { Harness, RunSpec } from '../../src/coding/harness.ts';
import type { Config } from '../../src/core/config.ts';
import type { EventOf, FakeInvocation } from './harness-run.ts';
import { drive, endAfterTurn, exitedOf, ofType, readInvocations } from './harness-run.ts';
import { tempDir } from './temp-dir.ts';

const FAKE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));
const TEST_TIMEOUT = 20_000;

let dir: { path: string; remove: () => void };
let logPath: string;

beforeEach(() => {
  dir = tempDir();
  logPath = join(dir.path, 'invocations.jsonl');
});

afterEach(() => dir.remove());

function harness(overrides: Partial<Config['harnesses']['claude']> = {}, killGraceMs = 2_000): Harness {
  return createClaudeHarness({
    config: {
      executable: FAKE,
      settingSources: ['project'],
      env: { FAKE_AGENT_LOG: logPath, FAKE_CONFIG_VAR: 'c' },
      ...overrides,
    },
    killGraceMs,
  });
}

function spec(prompt: string, extra: Partial<RunSpec> = {}): RunSpec {
  return { sessionId: 'sb-test-1', prompt, workdir: dir.path, permissionMode: 'bypassPermissions', ...extra };
}

function invocations(): FakeInvocation[] {
  return readInvocations(logPath);
}

function reasonOf(event: EventOf<'turnEnd'> | undefined): string | undefined {
  return event && !event.outcome.ok ? event.outcome.reason : undefined;
}

describe('Claude harness over the fake CLI', { timeout: TEST_TIMEOUT }, () => {
  it('serves two turns from one process with one backend id, passing the options through', async () => {
    const run = harness().start(
      spec('first question', { model: 'claude-test', maxBudgetUsd: 2, env: { FAKE_SPEC_VAR: 's' } }),
    );
    let pidDuringRun: number | undefined;
    let turns = 0;
    const events = await drive(run, (event, r) => {
      if (event.type === 'started') pidDuringRun = r.pid;
      if (event.type !== 'turnEnd') return;
      turns += 1;
      if (turns === 1) r.send('second question');
      else r.end();
    });
    const ends = ofType(events, 'turnEnd');
    assert.deepEqual(
      ends.map((e) => e.outcome),
      [
        { ok: true, result: 'FAKE CLAUDE REPLY to: first question' },
        { ok: true, result: 'FAKE CLAUDE REPLY to: second question' },
      ],
    );
    assert.deepEqual(
      ends.map((e) => e.costUsd),
      [0.0001, 0.0001],
    );
    const ids = new Set(ofType(events, 'started').map((e) => e.backendSessionId));
    assert.equal(ids.size, 1);
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
    assert.ok(pidDuringRun && pidDuringRun > 0);
    const calls = invocations();
    assert.equal(calls.length, 1, 'one process for both turns');
    const [call] = calls;
    assert.equal(call?.env.SWITCHBOARD_SESSION_ID, 'sb-test-1');
    assert.equal(call?.env.FAKE_SPEC_VAR, 's');
    assert.equal(call?.env.FAKE_CONFIG_VAR, 'c');
    for (const arg of [
      '--permission-mode=bypassPermissions',
      '--setting-sources=project',
      '--model=claude-test',
      '--max-budget-usd=2',
      '--input-format',
    ]) {
      assert.ok(
        call?.argv.some((a) => a.startsWith(arg)),
        `${arg} in ${call?.argv.join(' ')}`,
      );
    }
    assert.ok(
      !call?.argv.some((a) => a.startsWith('--permission-prompt-tool')),
      'no permission prompts in bypass mode',
    );
    assert.throws(() => run.send('too late'), /ended/);
  });

  it('reports a tool call and its result', async () => {
    const events = await drive(harness().start(spec('go [[tool]]')));
    const [tool] = ofType(events, 'tool');
    const [result] = ofType(events, 'toolResult');
    assert.deepEqual(tool, {
      type: 'tool',
      id: tool?.id,
      name: 'Bash',
      input: { command: 'echo hello-from-tool', description: 'echo' },
    });
    assert.deepEqual(result, { type: 'toolResult', id: tool?.id, isError: false, output: 'hello-from-tool' });
    assert.deepEqual(ofType(events, 'text').at(-1), { type: 'text', text: 'tool said: hello-from-tool' });
  });

  it('asks for permission outside bypassPermissions and honours allow and deny', async () => {
    const run = harness().start(spec('first [[tool]]', { permissionMode: 'default' }));
    let permissions = 0;
    const events = await drive(run, (event, r) => {
      if (event.type === 'permission') {
        permissions += 1;
        assert.equal(event.tool, 'Bash');
        assert.deepEqual(event.input, { command: 'echo hello-from-tool', description: 'echo' });
        r.answerPermission(event.requestId, permissions === 1 ? { allow: true } : { allow: false, message: 'not now' });
      }
      if (event.type === 'turnEnd') {
        if (permissions === 1) r.send('second [[tool]]');
        else r.end();
      }
    });
    const results = ofType(events, 'toolResult');
    assert.deepEqual(
      results.map((r) => [r.isError, r.output]),
      [
        [false, 'hello-from-tool'],
        [true, 'not now'],
      ],
    );
    assert.equal(ofType(events, 'turnEnd').length, 2);
    assert.ok(invocations()[0]?.argv.includes('--permission-prompt-tool=stdio'));
  });

  it('AskUserQuestion → a question event; outside bypass mode it asks, and the answers come back as its input', async () => {
    const bypass = await drive(harness().start(spec('[[question]]')));
    assert.deepEqual(ofType(bypass, 'question'), [{ type: 'question', text: 'Which file should I change?' }]);
    assert.equal(ofType(bypass, 'turnEnd')[0]?.outcome.ok, true);
    const asking = await drive(
      harness().start(spec('[[question]]', { permissionMode: 'acceptEdits' })),
      (event, run) => {
        if (event.type === 'permission') {
          const input = event.input as Record<string, unknown>;
          run.answerPermission(event.requestId, {
            allow: true,
            updatedInput: { ...input, answers: { 'Which file should I change?': 'b.ts' } },
          });
        }
        return endAfterTurn(event, run);
      },
    );
    assert.deepEqual(
      ofType(asking, 'permission').map((p) => p.tool),
      ['AskUserQuestion'],
    );
    assert.equal(ofType(asking, 'question').length, 1);
    const [result] = ofType(asking, 'toolResult');
    assert.equal(result?.isError, false);
    assert.equal(result?.output, 'User has answered your questions: "Which file should I change?"="b.ts"');
  });

  it('drops garbage lines with malformed warnings and finishes the turn', async () => {
    const events = await drive(harness().start(spec('[[garbage]] hi')));
    const malformed = ofType(events, 'warning').filter((w) => w.malformed);
    assert.equal(malformed.length, 4);
    assert.ok(malformed.some((w) => w.message.includes('not JSON')));
    assert.ok(malformed.some((w) => w.message.includes('assistant message failed its schema')));
    assert.deepEqual(ofType(events, 'turnEnd')[0]?.outcome, { ok: true, result: 'FAKE CLAUDE REPLY to: hi' });
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
  });

  it('a crash mid-turn exits with the code and the stderr tail', async () => {
    const events = await drive(harness().start(spec('[[crash]]')));
    assert.equal(ofType(events, 'turnEnd').length, 0);
    const exited = exitedOf(events);
    assert.equal(exited.code, 3);
    assert.match(exited.error ?? '', /exited with code 3 before the turn finished/);
    assert.match(exited.error ?? '', /simulated crash/);
  });

  it('an API error ends the turn as api_error 400 and ends the run', async () => {
    const events = await drive(harness().start(spec('[[error]]')), () => {});
    const [end] = ofType(events, 'turnEnd');
    assert.deepEqual(end?.outcome, {
      ok: false,
      reason: 'api_error',
      message: 'API Error: 400 fake bad request',
      apiErrorStatus: 400,
    });
    assert.equal(end?.costUsd, 0);
    assert.equal(ofType(events, 'text').length, 0, 'the synthetic error message is a warning, not assistant text');
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 1 });
  });

  it('the budget stop is budget_exhausted', async () => {
    const events = await drive(harness().start(spec('[[budget]]', { maxBudgetUsd: 0.0001 })), () => {});
    assert.deepEqual(ofType(events, 'turnEnd')[0]?.outcome, {
      ok: false,
      reason: 'budget_exhausted',
      message: 'Reached maximum budget ($0.0001)',
    });
    assert.equal(exitedOf(events).code, 1);
  });

  it('kill() stops a hung process at once, and escalates to SIGKILL after the grace when SIGTERM is ignored', async () => {
    for (const ignore of [false, true]) {
      const graceMs = 500;
      const run = harness(
        { env: { FAKE_AGENT_LOG: logPath, ...(ignore ? { FAKE_IGNORE_SIGTERM: '1' } : {}) } },
        graceMs,
      ).start(spec('[[hang]]'));
      let killedAt = 0;
      const events = await drive(run, (event, r) => {
        if (event.type === 'started') {
          killedAt = Date.now();
          r.kill();
        }
      });
      const elapsed = Date.now() - killedAt;
      assert.deepEqual(exitedOf(events), { type: 'exited', code: null, error: 'killed' });
      if (ignore)
        assert.ok(elapsed >= graceMs - 50 && elapsed < graceMs + 2_000, `SIGKILL after the grace: ${elapsed} ms`);
      else assert.ok(elapsed < graceMs, `SIGTERM was enough: ${elapsed} ms`);
    }
  });

  it('kill() right after start, and end() right after start (the first turn still completes)', async () => {
    const killed = harness().start(spec('[[sleep:3000]] never'));
    killed.kill();
    assert.deepEqual(exitedOf(await drive(killed)), { type: 'exited', code: null, error: 'killed' });
    const ended = harness().start(spec('only turn'));
    ended.end();
    const events = await drive(ended, () => {});
    assert.deepEqual(ofType(events, 'turnEnd')[0]?.outcome, { ok: true, result: 'FAKE CLAUDE REPLY to: only turn' });
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
  });

  it('interrupt during a sleep ends the turn as interrupted; the run goes on', async () => {
    const run = harness().start(spec('[[sleep:5000]] slow one'));
    const started = Date.now();
    let starts = 0;
    let turns = 0;
    const events = await drive(run, async (event, r) => {
      if (event.type === 'started' && ++starts === 1) {
        await r.interrupt();
        r.send('quick one');
      }
      if (event.type === 'turnEnd' && ++turns === 2) r.end();
    });
    const ends = ofType(events, 'turnEnd');
    assert.equal(reasonOf(ends[0]), 'interrupted');
    assert.deepEqual(ends[1]?.outcome, { ok: true, result: 'FAKE CLAUDE REPLY to: quick one' });
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
    assert.ok(Date.now() - started < 4_000);
  });

  it('interrupt during a slow tool closes the tool call and ends the turn as interrupted', async () => {
    const run = harness().start(spec('[[slow-tool:5000]]'));
    const events = await drive(run, async (event, r) => {
      if (event.type === 'tool') await r.interrupt();
      if (event.type === 'turnEnd') r.end();
    });
    const [tool] = ofType(events, 'tool');
    const [result] = ofType(events, 'toolResult');
    assert.equal(result?.id, tool?.id);
    assert.equal(result?.isError, true);
    assert.equal(reasonOf(ofType(events, 'turnEnd')[0]), 'interrupted');
  });

  it('interrupt() with no turn running does nothing', async () => {
    const run = harness().start(spec('hello'));
    const events = await drive(run, async (event, r) => {
      if (event.type === 'turnEnd') {
        await r.interrupt();
        r.end();
      }
    });
    assert.equal(ofType(events, 'turnEnd')[0]?.outcome.ok, true);
    assert.deepEqual(exitedOf(events), { type: 'exited', code: 0 });
  });

  it('resume keeps the backend id; fork starts a new one', async () => {
    const id = randomUUID();
    const resumed = await drive(harness().start(spec('again', { resumeBackendId: id })));
    assert.deepEqual(new Set(ofType(resumed, 'started').map((e) => e.backendSessionId)), new Set([id]));
    assert.ok(invocations()[0]?.argv.includes(`--resume=${id}`));
    const forked = await drive(harness().start(spec('again', { resumeBackendId: id, forkSession: true })));
    const [fork] = ofType(forked, 'started');
    assert.ok(fork && fork.backendSessionId !== id);
    assert.ok(invocations()[1]?.argv.includes('--fork-session'));
  });

  it('the root refusal of bypassPermissions gets a plain error that names the fix', async () => {
    const run = harness({ env: { FAKE_AGENT_LOG: logPath, FAKE_ROOT_REFUSAL: '1' } }).start(spec('hi'));
    const events = await drive(run);
    const exited = exitedOf(events);
    assert.equal(exited.code, 1);
    assert.match(exited.error ?? '', /root/);
    assert.match(exited.error ?? '', /IS_SANDBOX=1 in harnesses\.claude\.env/);
    assert.match(exited.error ?? '', /another permissionMode/);
  });

  it('replays the claude-multi capture as two successful turns', async () => {
    const events = await drive(harness().start(spec('[[replay:claude-multi]]')));
    const ends = ofType(events, 'turnEnd');
    assert.equal(ends.length, 2);
    assert.ok(ends.every((e) => e.outcome.ok && Math.abs(e.costUsd - 0.00018) < 1e-12));
    assert.deepEqual(
      new Set(ofType(events, 'started').map((e) => e.backendSessionId)),
      new Set(['af62ec28-9e75-4803-b8f1-42f4f66f8d55']),
    );
    assert.equal(exitedOf(events).code, 0);
  });

  it('an executable that does not exist ends the run with a clear error', async () => {
    const events = await drive(harness({ executable: join(dir.path, 'no-such-claude') }).start(spec('hi')));
    const exited = exitedOf(events);
    assert.equal(exited.code, null);
    assert.match(exited.error ?? '', /could not start Claude Code.*ENOENT/);
  });

  it('check() runs --version; a missing executable is a problem', async () => {
    assert.deepEqual(await harness().check(), { ok: true, executable: FAKE, version: '2.1.330-fake (Claude Code)' });
    const missing = await harness({ executable: join(dir.path, 'nope') }).check();
    assert.equal(missing.ok, false);
    assert.match(missing.problem ?? '', /--version` failed/);
  });
});

describe('fake-claude spawned directly', { timeout: TEST_TIMEOUT }, () => {
  /** Runs the fake with `args`, writing `stdin` lines; resolves to its stdout messages and exit code. */
  function runFake(
    args: string[],
    stdin: unknown[],
  ): Promise<{ messages: { type: string; subtype?: string; result?: string }[]; code: number | null }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [FAKE, ...args], { cwd: dir.path, stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
      });
      child.on('error', reject);
      child.on('close', (code) =>
        resolve({
          messages: out
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l)),
          code,
        }),
      );
      for (const line of stdin) child.stdin.write(`${JSON.stringify(line)}\n`);
      child.stdin.end();
    });
  }

  it('speaks stream-json on stdin/stdout without the SDK', async () => {
    const user = (text: string): unknown => ({
      type: 'user',
      message: { role: 'user', content: text },
      parent_tool_use_id: null,
      session_id: '',
    });
    const { messages, code } = await runFake(
      ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json'],
      [
        { type: 'control_request', request_id: 'init-1', request: { subtype: 'initialize' } },
        user('one [[tool]]'),
        user('two'),
      ],
    );
    assert.equal(code, 0);
    assert.equal(messages[0]?.type, 'control_response');
    const results = messages.filter((m) => m.type === 'result');
    assert.deepEqual(
      results.map((r) => r.result),
      ['tool said: hello-from-tool', 'FAKE CLAUDE REPLY to: two'],
    );
    assert.equal(messages.filter((m) => m.type === 'system' && m.subtype === 'init').length, 2);
  });

  it('-p runs one turn', async () => {
    const { messages, code } = await runFake(['-p', 'hello there'], []);
    assert.equal(code, 0);
    assert.equal(messages.at(-1)?.result, 'FAKE CLAUDE REPLY to: hello there');
  });
});

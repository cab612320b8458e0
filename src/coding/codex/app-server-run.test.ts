// AppServerRun against fake-app-server.mjs: what the real CLI cannot easily be made to do (ask a question, send a
// request switchboard does not offer, resolve an approval itself, crash mid-turn, refuse to initialize).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { collect, endRun, ofType } from '../../../test/support/harness-run.ts';
import { tempDir } from '../../../test/support/temp-dir.ts';
import { AppServerRun } from './app-server-run.ts';
import { CodexUsageTracker } from './codex-usage.ts';

const FAKE = fileURLToPath(new URL('fake-app-server.mjs', import.meta.url));
const dir = tempDir('sb-app-server-run-');
after(() => dir.remove());
let counter = 0;

/** A run on the fake; `log()` is every message the fake received, in order. */
function start(prompt: string, env: Record<string, string> = {}): { run: AppServerRun; log: () => unknown[] } {
  counter += 1;
  const logFile = join(dir.path, `log-${counter}.jsonl`);
  const run = new AppServerRun({
    sessionId: `sb-${counter}`,
    prompt,
    workdir: dir.path,
    mode: { approvalPolicy: 'untrusted', sandbox: 'workspace-write', acceptEditsInWorkdir: false },
    usage: new CodexUsageTracker({ known: true }),
    killGraceMs: 2_000,
    plan: () => ({
      command: process.execPath,
      args: [FAKE],
      cwd: dir.path,
      env: { ...process.env, FAKE_LOG: logFile, ...env },
    }),
  });
  const log = () =>
    existsSync(logFile)
      ? readFileSync(logFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as unknown)
      : [];
  return { run, log };
}

test('initialize, initialized, thread/start with the mode, turn/start; a send during a turn waits for it', async () => {
  const { run, log } = start('first');
  const c = collect(run);
  run.send('second');
  await c.waitFor((e) => e.type === 'turnEnd', 2);
  await endRun(run, c);
  assert.deepEqual(
    ofType(c.events, 'text').map((e) => e.text),
    ['echo: first', 'echo: second'],
  );
  assert.deepEqual(ofType(c.events, 'started')[0], { type: 'started', backendSessionId: 'th-1', model: 'fake-model' });
  const methods = log().map((m) => (m as { method?: string }).method);
  assert.deepEqual(methods, ['initialize', 'initialized', 'thread/start', 'turn/start', 'turn/start']);
  assert.deepEqual((log()[2] as { params: unknown }).params, {
    cwd: dir.path,
    approvalPolicy: 'untrusted',
    sandbox: 'workspace-write',
  });
});

test('request_user_input: a question event; the next send is its answer, not a new turn', async () => {
  const { run, log } = start('ASK me');
  const c = collect(run);
  const asked = await c.waitFor((e) => e.type === 'question');
  assert.deepEqual(asked, { type: 'question', text: 'Which colour?' });
  run.send('blue');
  await c.waitFor((e) => e.type === 'turnEnd');
  await endRun(run, c);
  assert.deepEqual(ofType(c.events, 'text')[0]?.text, JSON.stringify({ answers: { q1: { answers: ['blue'] } } }));
  assert.equal(log().filter((m) => (m as { method?: string }).method === 'turn/start').length, 1);
});

test('a server request switchboard does not offer is refused with an error and a warning', async () => {
  const { run } = start('TOOLCALL');
  const c = collect(run);
  await c.waitFor((e) => e.type === 'turnEnd');
  await endRun(run, c);
  assert.equal(ofType(c.events, 'text')[0]?.text, 'refused: switchboard does not handle item/tool/call');
  assert.ok(ofType(c.events, 'warning').some((w) => /item\/tool\/call/.test(w.message)));
});

test('an approval the server resolved itself is not answered later', async () => {
  const { run, log } = start('RESOLVE');
  const c = collect(run);
  const asked = await c.waitFor((e) => e.type === 'permission');
  await c.waitFor((e) => e.type === 'turnEnd');
  run.answerPermission((asked as { requestId: string }).requestId, { allow: true });
  await endRun(run, c);
  assert.equal((asked as { requestId: string }).requestId, 'tu-1:5');
  assert.ok(!log().some((m) => (m as { id?: unknown }).id === 5), 'no answer to request 5');
});

test('interrupt: turn/interrupt for the running turn; the turn ends interrupted', async () => {
  const { run, log } = start('SLOW');
  const c = collect(run);
  await c.waitFor((e) => e.type === 'started');
  await run.interrupt();
  const end = await c.waitFor((e) => e.type === 'turnEnd');
  assert.deepEqual((end as { outcome: unknown }).outcome, { ok: false, reason: 'interrupted', message: 'interrupted' });
  await endRun(run, c);
  const interrupt = log().find((m) => (m as { method?: string }).method === 'turn/interrupt');
  assert.deepEqual((interrupt as { params: unknown }).params, { threadId: 'th-1', turnId: 'tu-1' });
});

test('a crash in the middle of a turn: exited with the code and the stderr tail', async () => {
  const { run } = start('CRASH');
  const c = collect(run);
  await c.done;
  assert.deepEqual(c.events.at(-1), {
    type: 'exited',
    code: 3,
    error: 'the Codex app-server exited with code 3 before the turn finished: fatal: the fake crashed',
  });
});

test('an initialize error stops the server; the run exits saying why', async () => {
  const { run } = start('hello', { FAKE_INIT_ERROR: '1' });
  const c = collect(run);
  await c.done;
  const exited = c.events.at(-1);
  assert.equal(exited?.type, 'exited');
  assert.match((exited as { error?: string }).error ?? '', /^could not start the Codex thread: initialize: not today$/);
});

test('a command that cannot be planned (no workdir) exits at once', async () => {
  const run = new AppServerRun({
    sessionId: 'sb-x',
    prompt: 'p',
    workdir: '/nonexistent',
    mode: { approvalPolicy: 'untrusted', sandbox: 'workspace-write', acceptEditsInWorkdir: false },
    usage: new CodexUsageTracker({ known: true }),
    killGraceMs: 2_000,
    plan: () => {
      throw new Error('the workdir /nonexistent does not exist');
    },
  });
  const c = collect(run);
  await c.done;
  assert.deepEqual(c.events, [{ type: 'exited', code: null, error: 'the workdir /nonexistent does not exist' }]);
  assert.throws(() => run.send('more'), /the run has ended/);
});

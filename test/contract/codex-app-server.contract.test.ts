// Contract: the real Codex CLI in permission modes that ask (one `codex app-server` per run) against the local mock
// Responses API, offline (see codex-contract-env.ts). `default` (approval policy `untrusted`): the model asks to run a shell
// command; Codex's approval request arrives as a `permission` event; allowing it runs the command (its output reaches the
// model's next request), denying it does not (and the deny's message reaches the model). A patch (Codex's apply_patch,
// sent through exec_command) asks as `Edit`; acceptEdits applies one inside the workdir unasked; auto (`on-request`) asks
// only for what the model wants to run outside the sandbox.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Run } from '../../src/coding/harness.ts';
import type { EventOf } from '../support/harness-run.ts';
import {
  assertApiErrorTurn,
  collect as collectEvents,
  endRun,
  interruptTurn,
  meaningful,
  ofType,
  resumeAfterInterrupt,
} from '../support/harness-run.ts';
import type { ResponsesBody } from '../support/mock-openai-responses.ts';
import {
  allInputTexts,
  defaultResponsesReply,
  inputItems,
  lastUserText,
  pendingToolOutputs,
  responsesFunctionCall,
  responsesText,
} from '../support/mock-openai-responses.ts';
import { codexContractEnv, skip } from './codex-contract-env.ts';

const TIMEOUT = 60_000;
const { mock, proxied, setup, spec, bodyOf } = codexContractEnv('sb-codex-app-contract-');

/** Collects a run's events; the real CLI may take a while to answer. */
const collect = (run: Run) => collectEvents(run, 45_000);

/** "TOUCH <name>" in the user's text → `exec_command touch <name> && echo ran-<name>`; else the default script. */
function touchHandler(body: ResponsesBody) {
  const name = /TOUCH (\w+)/.exec(lastUserText(body))?.[1];
  if (!name || pendingToolOutputs(body).length > 0) return defaultResponsesReply(body);
  return responsesFunctionCall('exec_command', { cmd: `touch ${name}.txt && echo ran-${name}` });
}

/** "PATCH <name>" → Codex's apply_patch run through exec_command (Codex takes it for a patch), adding <name>.txt. */
function patchHandler(body: ResponsesBody) {
  const name = /PATCH (\w+)/.exec(lastUserText(body))?.[1];
  if (!name || pendingToolOutputs(body).length > 0) return defaultResponsesReply(body);
  const patch = `*** Begin Patch\n*** Add File: ${name}.txt\n+hi\n*** End Patch`;
  return responsesFunctionCall('exec_command', { cmd: `apply_patch <<'EOF'\n${patch}\nEOF\n` });
}

/** The output of the function call the model's last request answered ('' when none). */
function toolOutput(body: ResponsesBody): string {
  const output = inputItems(body).findLast((i) => i.type === 'function_call_output')?.output;
  return typeof output === 'string' ? output : JSON.stringify(output ?? '');
}

async function askedRun(
  prompt: string,
  permissionMode: 'default' | 'acceptEdits' | 'auto' = 'default',
): Promise<{ run: Run; c: ReturnType<typeof collect>; workdir: string }> {
  const { harness, workdir } = setup();
  assert.equal(harness.asksPermission, true);
  const run = harness.start(spec(prompt, workdir, { permissionMode }));
  return { run, c: collect(run), workdir };
}

test(
  'allow: a permission event for Bash {command}; allowed, the command runs and its output reaches the model',
  { skip, timeout: TIMEOUT },
  async () => {
    mock().setHandler(touchHandler);
    try {
      const { run, c, workdir } = await askedRun('please TOUCH allowed');
      const asked = (await c.waitFor((e) => e.type === 'permission')) as EventOf<'permission'>;
      assert.equal(asked.tool, 'Bash');
      assert.deepEqual(asked.input, { command: 'touch allowed.txt && echo ran-allowed', cwd: workdir });
      assert.equal(existsSync(join(workdir, 'allowed.txt')), false, 'nothing runs before the answer');
      run.answerPermission(asked.requestId, { allow: true });
      await c.waitFor((e) => e.type === 'turnEnd');
      await endRun(run, c);
      const events = meaningful(c.events);
      assert.deepEqual(
        events.map((e) => e.type),
        ['started', 'tool', 'permission', 'toolResult', 'text', 'turnEnd', 'exited'],
        JSON.stringify(c.events),
      );
      assert.ok(existsSync(join(workdir, 'allowed.txt')), 'the command ran');
      const [result] = ofType(events, 'toolResult');
      assert.deepEqual([result?.id, result?.isError], [ofType(events, 'tool')[0]?.id, false]);
      assert.match(toolOutput(bodyOf(-1)), /ran-allowed/, 'the output went back to the model');
      assert.match(ofType(events, 'text')[0]?.text ?? '', /^codex tool output was: .*ran-allowed/s);
      const [end] = ofType(events, 'turnEnd');
      assert.deepEqual(end?.outcome, { ok: true });
      assert.deepEqual(end?.usage, { inputTokens: 200, outputTokens: 20, cachedInputTokens: 0 }, 'two model requests');
      assert.match(ofType(events, 'started')[0]?.backendSessionId ?? '', /^[0-9a-f-]{36}$/);
    } finally {
      mock().setHandler(undefined);
    }
  },
);

test(
  'deny with a message: the command does not run; the model gets the refusal and the message',
  { skip, timeout: TIMEOUT },
  async () => {
    mock().setHandler(touchHandler);
    try {
      const { run, c, workdir } = await askedRun('please TOUCH denied');
      const asked = (await c.waitFor((e) => e.type === 'permission')) as EventOf<'permission'>;
      run.answerPermission(asked.requestId, { allow: false, message: 'not in this repo' });
      await c.waitFor((e) => e.type === 'turnEnd');
      await endRun(run, c);
      assert.equal(existsSync(join(workdir, 'denied.txt')), false, 'the command did not run');
      const [result] = ofType(c.events, 'toolResult');
      assert.equal(result?.isError, true, 'a declined command is a failed tool call');
      assert.match(toolOutput(bodyOf(-1)), /rejected/i);
      assert.doesNotMatch(toolOutput(bodyOf(-1)), /ran-denied/);
      assert.ok(
        allInputTexts(bodyOf(-1)).includes('Permission denied: not in this repo'),
        "the deny's message reached the model",
      );
      assert.deepEqual(ofType(c.events, 'turnEnd')[0]?.outcome, { ok: true });
    } finally {
      mock().setHandler(undefined);
    }
  },
);

test(
  'a patch asks as Edit {file_path, file_paths, changes}; allowed, it is applied',
  { skip, timeout: TIMEOUT },
  async () => {
    mock().setHandler(patchHandler);
    try {
      const { run, c, workdir } = await askedRun('PATCH edited');
      const asked = (await c.waitFor((e) => e.type === 'permission')) as EventOf<'permission'>;
      const path = join(workdir, 'edited.txt');
      assert.equal(asked.tool, 'Edit');
      assert.deepEqual(asked.input, {
        file_path: path,
        file_paths: [path],
        changes: [{ path, kind: 'add', diff: 'hi\n' }],
      });
      assert.equal(existsSync(path), false, 'nothing is written before the answer');
      run.answerPermission(asked.requestId, { allow: true });
      await c.waitFor((e) => e.type === 'turnEnd');
      await endRun(run, c);
      assert.ok(existsSync(path), 'the patch was applied');
      assert.equal(ofType(c.events, 'tool')[0]?.name, 'apply_patch');
      assert.deepEqual(ofType(c.events, 'toolResult')[0]?.isError, false);
    } finally {
      mock().setHandler(undefined);
    }
  },
);

test('acceptEdits: a patch inside the workdir is applied without asking', { skip, timeout: TIMEOUT }, async () => {
  mock().setHandler(patchHandler);
  try {
    const { run, c, workdir } = await askedRun('PATCH accepted', 'acceptEdits');
    await c.waitFor((e) => e.type === 'turnEnd');
    await endRun(run, c);
    assert.deepEqual(ofType(c.events, 'permission'), []);
    assert.ok(existsSync(join(workdir, 'accepted.txt')), 'the patch was applied');
  } finally {
    mock().setHandler(undefined);
  }
});

test(
  'auto: a command runs in the sandbox without asking; one outside it asks, with its reason',
  { skip, timeout: TIMEOUT },
  async () => {
    mock().setHandler((body) => {
      const text = lastUserText(body);
      if (pendingToolOutputs(body).length > 0 || !text.includes('RUN')) return defaultResponsesReply(body);
      const escalate = text.includes('OUTSIDE')
        ? { sandbox_permissions: 'require_escalated', justification: 'needs it' }
        : {};
      return responsesFunctionCall('exec_command', { cmd: 'touch ran.txt', ...escalate });
    });
    try {
      const quiet = await askedRun('RUN inside', 'auto');
      await quiet.c.waitFor((e) => e.type === 'turnEnd');
      await endRun(quiet.run, quiet.c);
      assert.deepEqual(ofType(quiet.c.events, 'permission'), []);
      assert.ok(existsSync(join(quiet.workdir, 'ran.txt')));
      const { run, c, workdir } = await askedRun('RUN OUTSIDE', 'auto');
      const asked = (await c.waitFor((e) => e.type === 'permission')) as EventOf<'permission'>;
      assert.deepEqual(asked.input, { command: 'touch ran.txt', cwd: workdir, reason: 'needs it' });
      run.answerPermission(asked.requestId, { allow: false, message: '' });
      await c.waitFor((e) => e.type === 'turnEnd');
      await endRun(run, c);
      assert.equal(existsSync(join(workdir, 'ran.txt')), false);
    } finally {
      mock().setHandler(undefined);
    }
  },
);

test(
  'turns: a second send and a second run (resumeBackendId) continue the same thread; usage per turn',
  { skip, timeout: TIMEOUT },
  async () => {
    const { harness, workdir } = setup();
    const asking = (prompt: string, extra = {}) =>
      harness.start(
        spec(prompt, workdir, { permissionMode: 'default', systemPrompt: 'Answer like a pirate.', ...extra }),
      );
    const run = asking('remember the word PINEAPPLE');
    const c = collect(run);
    await c.waitFor((e) => e.type === 'turnEnd');
    run.send('second turn');
    await c.waitFor((e) => e.type === 'turnEnd', 2);
    await endRun(run, c);
    const ids = ofType(c.events, 'started').map((e) => e.backendSessionId);
    assert.equal(ids.length, 2);
    assert.equal(ids[0], ids[1]);
    const turn = { inputTokens: 100, outputTokens: 10, cachedInputTokens: 0 };
    assert.deepEqual(
      ofType(c.events, 'turnEnd').map((e) => e.usage),
      [turn, turn],
    );

    const resumed = asking('third turn', { resumeBackendId: ids[0] });
    const again = collect(resumed);
    await again.waitFor((e) => e.type === 'turnEnd');
    await endRun(resumed, again);
    const second = ofType(again.events, 'started')[0];
    assert.equal(second?.backendSessionId, ids[0]);
    assert.deepEqual(ofType(again.events, 'turnEnd')[0]?.usage, undefined, 'the earlier totals are unknown');
    const texts = allInputTexts(bodyOf(-1));
    for (const earlier of ['PINEAPPLE', 'second turn', 'MOCK CODEX REPLY', 'third turn'])
      assert.ok(
        texts.some((t) => t.includes(earlier)),
        `history has ${earlier}`,
      );
    assert.equal(
      texts.filter((t) => t === 'Answer like a pirate.').length,
      1,
      'the system prompt is in the history once',
    );
  },
);

test(
  'interrupt while the model is answering: turnEnd interrupted, then the next send resumes',
  { skip, timeout: TIMEOUT },
  async () => {
    const { promise: answering, resolve: answer } = Promise.withResolvers<void>();
    mock().setHandler((body) => {
      if (!lastUserText(body).includes('SLOW')) return responsesText('MOCK CODEX REPLY');
      answer();
      return responsesText('late', { delayMs: 20_000 });
    });
    try {
      const { run, c } = await askedRun('SLOW answer');
      await c.waitFor((e) => e.type === 'started');
      await answering;
      await interruptTurn(run, c);
      await resumeAfterInterrupt(run, c, 'fast now');
    } finally {
      mock().setHandler(undefined);
    }
  },
);

test(
  'API_ERROR: an HTTP 400 fails the turn with api_error 400; the run then ends',
  { skip, timeout: TIMEOUT },
  async () => {
    const { run, c } = await askedRun('API_ERROR please');
    await c.waitFor((e) => e.type === 'turnEnd');
    assertApiErrorTurn(c.events, 400, /mock bad request/);
    await endRun(run, c);
  },
);

test('kill: a run waiting for an answer is stopped', { skip, timeout: TIMEOUT }, async () => {
  mock().setHandler(touchHandler);
  try {
    const { run, c, workdir } = await askedRun('please TOUCH killed');
    await c.waitFor((e) => e.type === 'permission');
    const pid = run.pid;
    assert.ok(pid !== undefined);
    run.kill();
    await c.done;
    const exited = c.events.at(-1);
    assert.equal(exited?.type, 'exited');
    assert.equal(exited.error, 'killed', 'the app-server exits 0 on SIGTERM; the run says why');
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'the app-server is gone');
    assert.equal(existsSync(join(workdir, 'killed.txt')), false);
  } finally {
    mock().setHandler(undefined);
  }
});

test('no request reached a public host', { skip, timeout: TIMEOUT }, () => {
  assert.deepEqual(proxied, []);
});

#!/usr/bin/env node
// A fake `gemini` (Gemini CLI 0.61 headless mode) for tests: one process per turn, steered by the directives of
// fake-scenario.mjs in the prompt. Accepts the real argv:
//   --prompt=<text> | --prompt <text> | -p <text>   --output-format stream-json   [--session-id <uuid> | --resume <uuid>]
//   [-m|--model <model>] [--approval-mode <mode>] [--skip-trust]        and --version
//
// Behaviour that mirrors the real CLI 0.61.0 (observed against a mock Gemini API):
// * stdout is JSONL: init{session_id, model} (the --session-id, else the --resume id, else a new uuid; model "auto"
//   unless -m), the user message echoed, assistant text as several `message` lines with `delta:true`, tool_use /
//   tool_result pairs (tool_id `run_shell_command__run_shell_command_<ms>_<n>`), then one `result` with `stats`; exit 0.
// * [[error]]: the real CLI's answer to an HTTP 400 from the API: a `result` with status "error",
//   error {type:"unknown", message:"[API Error: {…"code":400…}]"} and exit code 144 (= 400 & 0xff). [[budget]] does the same.
// * SIGTERM during a turn: the real CLI exits with code 0 and prints no `result`; so does the fake (unless
//   FAKE_IGNORE_SIGTERM=1 with [[hang]], which leaves only SIGKILL).
// * [[question]]: the `ask_user` tool is denied in headless mode (tool_result status "error"), then the question is
//   asked as plain text.
// Directives of this fake only:
// * [[exit144]]: a normal successful turn (`result` status "success") followed by exit code 144, to exercise the
//   harness rule that a non-zero exit after a success result is a failure.
// * [[stream:N]]: the reply arrives as N delta chunks 50 ms apart (one assistant message, as Gemini streams).
import { randomUUID } from 'node:crypto';
import {
  answerVersion,
  directive,
  emit,
  exitAfterFlush,
  flagValue,
  hang,
  logInvocation,
  parseDirectives,
  replayCapture,
  replyText,
  sleep,
  writeGarbage,
} from './fake-scenario.mjs';

const argv = process.argv.slice(2);

const flag = (...names) => flagValue(argv, ...names);

logInvocation('gemini');

answerVersion(argv, '-v', '0.61.0-fake');

const prompt = flag('--prompt', '-p');
if (prompt === undefined) {
  process.stderr.write('fake-gemini: no --prompt given (interactive mode is not faked)\n');
  process.exit(42);
}
if (flag('--output-format', '-o') !== 'stream-json') {
  process.stderr.write('fake-gemini: only --output-format stream-json is faked\n');
  process.exit(42);
}

const sessionId = flag('--session-id') || flag('--resume', '-r') || randomUUID();
const model = flag('--model', '-m') || 'auto';
const names = new Set(parseDirectives(prompt).map((d) => d.name));
// fake-scenario's directive pattern has no digits, so this one is looked up literally.
if (prompt.includes('[[exit144]]')) names.add('exit144');
const started = Date.now();
let toolCounter = 0;

process.on('SIGTERM', () => {
  if (names.has('hang') && process.env.FAKE_IGNORE_SIGTERM === '1') return;
  exitAfterFlush(0);
});

const now = () => new Date().toISOString();

/** Splits text into at most `parts` delta chunks. */
function chunks(text, parts) {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function assistant(text, parts = 3) {
  for (const content of chunks(text, parts))
    emit({ type: 'message', timestamp: now(), role: 'assistant', content, delta: true });
}

async function tool(name, parameters, result, delayMs = 0) {
  const id = `${name}__${name}_${Date.now()}_${toolCounter}`;
  toolCounter += 1;
  emit({ type: 'tool_use', timestamp: now(), tool_name: name, tool_id: id, parameters });
  if (delayMs > 0) await sleep(delayMs);
  emit({ type: 'tool_result', timestamp: now(), tool_id: id, ...result });
}

function stats() {
  const input = 100;
  const output = 10;
  const counts = { total_tokens: input + output, input_tokens: input, output_tokens: output, cached: 0, input };
  return {
    ...counts,
    duration_ms: Date.now() - started,
    tool_calls: toolCounter,
    models: { [model === 'auto' ? 'gemini-fake' : model]: counts },
  };
}

const GARBAGE = '{"type":"tool_use","tool_name":42}';

async function main() {
  if (replayCapture(prompt)) return 0;
  emit({ type: 'init', timestamp: now(), session_id: sessionId, model });
  emit({ type: 'message', timestamp: now(), role: 'user', content: prompt });
  if (names.has('garbage')) writeGarbage(GARBAGE);
  if (names.has('hang')) await hang();
  const sleepMs = Number(directive(prompt, 'sleep') ?? 0);
  if (sleepMs > 0) await sleep(sleepMs);
  if (names.has('crash')) {
    assistant('Working on it…', 1);
    process.stderr.write('fake-gemini: simulated crash (segfault in the flux capacitor)\n');
    return 3;
  }
  if (names.has('error') || names.has('budget')) {
    const body = JSON.stringify({ error: { code: 400, message: 'fake bad request', status: 'INVALID_ARGUMENT' } });
    emit({
      type: 'result',
      timestamp: now(),
      status: 'error',
      error: { type: 'unknown', message: `[API Error: ${body}]` },
      stats: { ...stats(), total_tokens: 0, input_tokens: 0, output_tokens: 0, input: 0 },
    });
    return 144;
  }
  let reply = replyText('gemini', prompt);
  if (names.has('tool')) {
    await tool(
      'run_shell_command',
      { command: 'echo hello-from-tool', description: 'echo' },
      { status: 'success', output: 'hello-from-tool' },
    );
    reply = 'tool said: hello-from-tool';
  }
  const slow = directive(prompt, 'slow-tool');
  if (slow !== undefined) {
    const ms = Number(slow || 1000);
    await tool(
      'run_shell_command',
      { command: `sleep ${ms / 1000}; echo slow-done`, description: 'slow' },
      { status: 'success', output: 'slow-done' },
      ms,
    );
    reply = 'tool said: slow-done';
  }
  if (names.has('question')) {
    const question = 'Which file should I change?';
    const parameters = {
      questions: [
        {
          question,
          header: 'File',
          type: 'choice',
          options: [
            { label: 'a.ts', description: 'the first' },
            { label: 'b.ts', description: 'the second' },
          ],
        },
      ],
    };
    const message =
      'Tool execution for "Ask User" requires user confirmation, which is not supported in non-interactive mode.';
    await tool('ask_user', parameters, { status: 'error', error: { type: 'unhandled_exception', message } });
    reply = question;
  }
  const blocks = Number(directive(prompt, 'stream') ?? 0);
  if (blocks > 0) {
    for (let i = 1; i <= blocks; i += 1) {
      assistant(`block ${i} of ${blocks}\n`, 1);
      if (names.has('garbage') && i === 1) writeGarbage(GARBAGE);
      await sleep(50);
    }
  }
  assistant(reply);
  if (names.has('garbage')) writeGarbage(GARBAGE);
  emit({ type: 'result', timestamp: now(), status: 'success', stats: stats() });
  return names.has('exit144') ? 144 : 0;
}

exitAfterFlush(await main());

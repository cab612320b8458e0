#!/usr/bin/env node
// A fake `codex` (Codex CLI 0.169 `exec --json`) for tests: one process per turn, steered by the directives of
// fake-scenario.mjs in the prompt. Accepts the real argv:
//   exec [--json|--experimental-json] [--skip-git-repo-check] [-C|--cd <dir>] [-m|--model <m>] [-s|--sandbox <mode>]
//        [--dangerously-bypass-approvals-and-sandbox] [-c|--config <key=value>]… [resume <thread_id>] [--] <prompt>
//   --version | -V
// Unknown options are refused with exit 2, like the real (clap) parser, so argv mistakes show up in tests.
//
// Behaviour that mirrors the real CLI 0.169.0 (observed against a mock Responses API):
// * stdout is JSONL: thread.started{thread_id} (a new uuid, or the resumed id), with -m an `error` item "Model metadata
//   for `<model>` not found…", turn.started, items (agent_message, command_execution started/completed), then
//   turn.completed{usage}. Usage is CUMULATIVE for the thread: each model request adds 100 input (20 cached) and 10 output
//   tokens, persisted per thread under $CODEX_HOME (default ~/.codex), so a resumed turn reports the running total.
// * stdin: the real CLI appends a piped stdin to the prompt (and blocks until it closes); this fake exits 2 with an
//   explanation when stdin is a pipe or socket, so a harness that forgets to close stdin is caught.
// * [[error]] / [[budget]]: the real CLI's answer to an HTTP 400: `error` then `turn.failed`, both carrying the bare JSON
//   error body, and exit code 1.
// * SIGTERM: the real CLI dies by the signal without printing anything more; so does the fake (unless
//   FAKE_IGNORE_SIGTERM=1 with [[hang]], which leaves only SIGKILL). SIGINT: the real CLI exits with code 1.
// * [[question]]: `codex exec` refuses request_user_input in its default mode, so the model asks in text; the fake emits
//   the request_user_input item Codex reports where the tool is available, then the question as text.
// * [[stream:N]]: N agent_message items 50 ms apart before the reply (Codex sends whole messages, not deltas).
import { randomUUID } from 'node:crypto';
import { existsSync, fstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  answerVersion,
  directive,
  emit,
  exitAfterFlush,
  hang,
  logInvocation,
  parseDirectives,
  replayCapture,
  replyText,
  sleep,
  writeGarbage,
} from './fake-scenario.mjs';

const WITH_VALUE = new Set([
  '-c',
  '--config',
  '-m',
  '--model',
  '-s',
  '--sandbox',
  '-C',
  '--cd',
  '-i',
  '--image',
  '-p',
  '--profile',
  '--enable',
  '--disable',
  '--local-provider',
  '--add-dir',
  '--output-schema',
  '--color',
  '-o',
  '--output-last-message',
  '--thread-source',
  '--cyber-access-program',
]);
const FLAGS = new Set([
  '--json',
  '--experimental-json',
  '--skip-git-repo-check',
  '--dangerously-bypass-approvals-and-sandbox',
  '--dangerously-bypass-hook-trust',
  '--ephemeral',
  '--oss',
  '--strict-config',
  '--approve-for-me',
  '--worktree',
  '--trust',
  '--ignore-user-config',
  '--ignore-rules',
  '--last',
  '--all',
]);
const SANDBOXES = new Set(['read-only', 'workspace-write', 'danger-full-access']);

function fail(message, code = 2) {
  process.stderr.write(`fake-codex: ${message}\n`);
  process.exit(code);
}

/** Parses `exec …` argv into { options: Map<name, value[]>, flags: Set, resume?: id, prompt? }. */
function parseArgv(argv) {
  const options = new Map();
  const flags = new Set();
  const positional = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    if (WITH_VALUE.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) fail(`error: a value is required for '${name}'`);
      options.set(name, [...(options.get(name) ?? []), value]);
    } else if (FLAGS.has(arg)) flags.add(arg);
    else if (arg.startsWith('-') && arg.length > 1) fail(`error: unexpected argument '${arg}' found`);
    else positional.push(arg);
  }
  const resume = positional[0] === 'resume';
  if (resume && !positional[1]) fail('error: resume needs a thread id (--last is not faked)');
  return {
    options,
    flags,
    resume: resume ? positional[1] : undefined,
    prompt: resume ? positional[2] : positional[0],
    extra: positional.slice(resume ? 3 : 1),
  };
}

logInvocation('codex');
const argv = process.argv.slice(2);
answerVersion(argv, '-V', 'codex-cli 0.169.0-fake');
if (argv[0] !== 'exec') fail('only `codex exec` is faked');
const args = parseArgv(argv.slice(1));
const one = (a, b) => (args.options.get(a) ?? args.options.get(b) ?? []).at(-1);
if (!args.flags.has('--json') && !args.flags.has('--experimental-json')) fail('only `exec --json` is faked');
if (args.prompt === undefined || args.prompt === '-')
  fail('no prompt argument (reading the prompt from stdin is not faked)');
if (args.extra.length > 0) fail(`error: unexpected argument '${args.extra[0]}' found`);
for (const pair of args.options.get('-c') ?? [])
  if (!/^[^=\s]+=/.test(pair)) fail(`error: invalid -c override '${pair}' (want key=value)`);
const sandbox = one('-s', '--sandbox');
if (sandbox !== undefined && !SANDBOXES.has(sandbox))
  fail(`error: invalid value '${sandbox}' for '--sandbox <SANDBOX_MODE>'`);
const cd = one('-C', '--cd');
if (cd !== undefined && !existsSync(cd)) fail(`Error: cannot change to ${cd}: No such file or directory`, 1);
const stdin = fstatSync(0);
if (stdin.isFIFO() || stdin.isSocket()) {
  fail('stdin is a pipe: the real codex would read it to EOF and append it to the prompt; spawn with stdin "ignore"');
}

const prompt = args.prompt;
const threadId = args.resume ?? randomUUID();
const model = one('-m', '--model');
const names = new Set(parseDirectives(prompt).map((d) => d.name));
const now = { item: 0, requests: 0 };

process.on('SIGINT', () => process.exit(1));
if (names.has('hang') && process.env.FAKE_IGNORE_SIGTERM === '1') process.on('SIGTERM', () => {});

const nextId = () => `item_${now.item++}`;
const message = (text) => emit({ type: 'item.completed', item: { id: nextId(), type: 'agent_message', text } });

async function command(cmd, output, delayMs = 0) {
  const id = nextId();
  const shell = `/bin/bash -lc '${cmd}'`;
  emit({
    type: 'item.started',
    item: {
      id,
      type: 'command_execution',
      command: shell,
      aggregated_output: '',
      exit_code: null,
      status: 'in_progress',
    },
  });
  if (delayMs > 0) await sleep(delayMs);
  emit({
    type: 'item.completed',
    item: {
      id,
      type: 'command_execution',
      command: shell,
      aggregated_output: `${output}\n`,
      exit_code: 0,
      status: 'completed',
    },
  });
  now.requests += 1;
}

/** The thread's cumulative usage after this turn, persisted under $CODEX_HOME like the real thread state. */
function cumulativeUsage() {
  const dir = join(process.env.CODEX_HOME || join(process.env.HOME || homedir(), '.codex'), 'fake-codex-threads');
  const file = join(dir, `${threadId}.json`);
  const before = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { input: 0, cached: 0, output: 0 };
  const after = {
    input: before.input + 100 * now.requests,
    cached: before.cached + 20 * now.requests,
    output: before.output + 10 * now.requests,
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(after));
  return {
    input_tokens: after.input,
    cached_input_tokens: after.cached,
    cache_write_input_tokens: 0,
    output_tokens: after.output,
    reasoning_output_tokens: 0,
  };
}

const GARBAGE = '{"type":"item.completed","item":{"id":"x","type":"agent_message","text":42}}';

async function main() {
  if (replayCapture(prompt)) return 0;
  emit({ type: 'thread.started', thread_id: threadId });
  if (model)
    emit({
      type: 'item.completed',
      item: {
        id: nextId(),
        type: 'error',
        message: `Model metadata for \`${model}\` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.`,
      },
    });
  emit({ type: 'turn.started' });
  if (names.has('garbage')) writeGarbage(GARBAGE);
  if (names.has('hang')) await hang();
  const sleepMs = Number(directive(prompt, 'sleep') ?? 0);
  if (sleepMs > 0) await sleep(sleepMs);
  if (names.has('crash')) {
    message('Working on it…');
    process.stderr.write('fake-codex: simulated crash (thread panicked in the flux capacitor)\n');
    return 3;
  }
  if (names.has('error') || names.has('budget')) {
    const body = JSON.stringify({
      error: { message: 'fake bad request', type: 'invalid_request_error', param: null, code: null },
    });
    emit({ type: 'error', message: body });
    emit({ type: 'turn.failed', error: { message: body } });
    return 1;
  }
  let reply = replyText('codex', prompt);
  if (names.has('tool')) {
    await command('echo hello-from-tool', 'hello-from-tool');
    reply = 'tool said: hello-from-tool';
  }
  const slow = directive(prompt, 'slow-tool');
  if (slow !== undefined) {
    const ms = Number(slow || 1000);
    await command(`sleep ${ms / 1000}; echo slow-done`, 'slow-done', ms);
    reply = 'tool said: slow-done';
  }
  if (names.has('question')) {
    const question = 'Which file should I change?';
    const options = [
      { label: 'a.ts', description: 'the first' },
      { label: 'b.ts', description: 'the second' },
    ];
    emit({
      type: 'item.completed',
      item: {
        id: nextId(),
        type: 'request_user_input',
        call_id: 'call_fake_1',
        questions: [{ id: 'file', header: 'File', question, options }],
      },
    });
    reply = question;
  }
  const blocks = Number(directive(prompt, 'stream') ?? 0);
  for (let i = 1; i <= blocks; i += 1) {
    message(`block ${i} of ${blocks}`);
    if (names.has('garbage') && i === 1) writeGarbage(GARBAGE);
    await sleep(50);
  }
  message(reply);
  if (names.has('garbage')) writeGarbage(GARBAGE);
  now.requests += 1;
  emit({ type: 'turn.completed', usage: cumulativeUsage() });
  return 0;
}

exitAfterFlush(await main());

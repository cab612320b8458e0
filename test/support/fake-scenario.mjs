// Shared vocabulary and plumbing of the fake agent executables (fake-claude.mjs, fake-codex.mjs, fake-gemini.mjs): the
// directives below, argv flags, --version, the invocation log, and exiting once stdout and stderr are flushed.
// A prompt steers the fake with directives in double brackets; several may be combined:
//   (none)            reply "FAKE <HARNESS> REPLY to: <prompt>" and end the turn successfully
//   [[question]]      reply with a question ("Which file should I change?") and end the turn
//   [[tool]]          call a shell tool (echo hello-from-tool), report its result, then reply
//   [[slow-tool:MS]]  call a tool whose result arrives only after MS milliseconds
//   [[sleep:MS]]      wait MS milliseconds before answering
//   [[stream:N]]      reply in N text blocks, 50 ms apart
//   [[garbage]]       print non-JSON and schema-violating lines among the normal output
//   [[error]]         end the turn with the backend's API-error outcome (exit code as the real CLI)
//   [[budget]]        Claude: end with error_max_budget_usd; other fakes treat it as [[error]]
//   [[crash]]         print some output, then exit 3 without ending the turn
//   [[hang]]          print the session start, then nothing until killed
//   [[replay:NAME]]   print test/fixtures/agent-streams/NAME.jsonl verbatim
//   [[write:PATH:TEXT]] write TEXT (and a newline) to PATH under the working directory before replying
// Every invocation is appended as one JSON line to $FAKE_AGENT_LOG when set: {argv, cwd, env subset, stdin lines}.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Returns the directives found in a prompt, in order: [{ name, arg }]. */
export function parseDirectives(text) {
  const out = [];
  for (const match of String(text).matchAll(/\[\[([a-z-]+)(?::([^\]]*))?\]\]/g)) {
    out.push({ name: match[1], arg: match[2] });
  }
  return out;
}

/** Looks up one directive by name; returns its arg ('' when it has none) or undefined. */
export function directive(text, name) {
  const found = parseDirectives(text).find((d) => d.name === name);
  return found ? (found.arg ?? '') : undefined;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The lines of a capture under test/fixtures/agent-streams. */
export function captureLines(name) {
  const path = join(here, '..', 'fixtures', 'agent-streams', `${name}.jsonl`);
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0);
}

/** Appends a record of this invocation to $FAKE_AGENT_LOG, if set. */
export function logInvocation(harness, extra = {}) {
  const path = process.env.FAKE_AGENT_LOG;
  if (!path) return;
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(SWITCHBOARD_|CODEX_|GEMINI_|GOOGLE_|ANTHROPIC_|OPENAI_|FAKE_|IS_SANDBOX|MOCK_)/.test(key)) env[key] = value;
  }
  appendFileSync(
    path,
    `${JSON.stringify({ harness, pid: process.pid, argv: process.argv.slice(2), cwd: process.cwd(), env, ...extra })}\n`,
  );
}

/** Writes one JSON object as a line on stdout. */
export function emit(object) {
  process.stdout.write(`${JSON.stringify(object)}\n`);
}

/** [[write:PATH:TEXT]]: writes each file the prompt asks for, relative to the working directory. */
function writeFiles(prompt) {
  for (const { name, arg } of parseDirectives(prompt)) {
    if (name !== 'write' || !arg) continue;
    const at = arg.indexOf(':');
    if (at > 0) writeFileSync(join(process.cwd(), arg.slice(0, at)), `${arg.slice(at + 1)}\n`);
  }
}

/** The reply text for a prompt, with directives stripped (a [[write]] directive's files are written first). */
export function replyText(harness, prompt) {
  writeFiles(prompt);
  const clean = String(prompt)
    .replace(/\[\[[^\]]*\]\]/g, '')
    .trim();
  return `FAKE ${harness.toUpperCase()} REPLY to: ${clean}`;
}

/** Value of `--flag value` or `--flag=value` in `argv` for any of `names` (the first occurrence); undefined when absent. */
export function flagValue(argv, ...names) {
  for (let i = 0; i < argv.length; i += 1) {
    for (const name of names) {
      if (argv[i] === name) return argv[i + 1] ?? '';
      if (argv[i].startsWith(`${name}=`)) return argv[i].slice(name.length + 1);
    }
  }
  return undefined;
}

/** When `argv` asks for the version (`--version` or `short`), prints `line` and exits 0. */
export function answerVersion(argv, short, line) {
  if (argv.includes('--version') || argv.includes(short)) {
    process.stdout.write(`${line}\n`);
    process.exit(0);
  }
}

/** Exits with `code` once everything written to stdout and stderr has been flushed. */
export function exitAfterFlush(code) {
  let waiting = 2;
  const done = () => {
    waiting -= 1;
    if (waiting === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/** [[replay:NAME]]: prints the capture verbatim and returns true; false when the prompt asks for none. */
export function replayCapture(prompt) {
  const replay = directive(prompt, 'replay');
  if (!replay) return false;
  for (const line of captureLines(replay)) process.stdout.write(`${line}\n`);
  return true;
}

/** [[garbage]]: a line that is not JSON, then `invalid` (a JSON line that breaks the output schema). */
export function writeGarbage(invalid) {
  process.stdout.write('not json at all\n');
  process.stdout.write(`${invalid}\n`);
}

/** [[hang]]: never settles, and keeps the process alive until it is killed. */
export function hang() {
  setInterval(() => {}, 1 << 30);
  return new Promise(() => {});
}

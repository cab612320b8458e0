#!/usr/bin/env node
// A fake Claude Code CLI speaking the headless stream-json protocol (agent-clis.md §1.2–1.4), steered by the
// directives of fake-scenario.mjs. Works under the Agent SDK (`--input-format stream-json`, control requests on stdin)
// and when spawned directly (write `{"type":"user",…}` lines to stdin, or pass `-p <prompt>` for one turn).
//
// Behaviour that mirrors the real CLI 2.1.330 (observed against a mock Messages API):
// * `system/init` is printed at the start of every turn, with a stable session_id: `--session-id`, else the `--resume`
//   value (unless `--fork-session`), else a new uuid.
// * every `control_request` is answered with a success `control_response` (interrupt answers `{still_queued:[]}`).
// * an interrupt during a turn ends it with a user "[Request interrupted by user]" line and a result
//   `subtype:error_during_execution, is_error:true, terminal_reason:aborted_streaming` (`aborted_tools` plus an is_error
//   tool_result when a tool was running), exactly as the real CLI does; the process keeps serving turns.
// * `total_cost_usd` is cumulative per process; `model_usage_since_last_result[*].costUSD` is 0.0001 per turn.
// * closing stdin ends the process (exit 0) once queued turns are done.
// * with `--permission-prompt-tool stdio` and a mode other than bypassPermissions, every tool not named in
//   `--allowedTools` asks through a `can_use_tool` control_request and waits for the answer.
// * [[error]] prints the CLI's API-error shape (synthetic assistant message with `error`, then a result with subtype
//   success, is_error true, terminal_reason api_error, api_error_status 400) and [[budget]] a tool call then
//   error_max_budget_usd; both exit 1 right after the result. (The real CLI in streaming-input mode keeps serving turns
//   and exits 1 only when stdin closes; the harness closes its input after a failed turn, so both paths end the same.)
// * `--version` prints a version line and exits.
// * [[hang]] with FAKE_IGNORE_SIGTERM=1 ignores SIGTERM (only SIGKILL ends it).
// * FAKE_ROOT_REFUSAL=1 with `--permission-mode bypassPermissions` prints the real root refusal on stderr and exits 1
//   without any stdout.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
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
  writeGarbage,
} from './fake-scenario.mjs';

const argv = process.argv.slice(2);

const flag = (name) => flagValue(argv, name);
const has = (name) => argv.includes(name) || argv.some((a) => a.startsWith(`${name}=`));

logInvocation('claude');

answerVersion(argv, '-v', '2.1.330-fake (Claude Code)');

const permissionMode = flag('--permission-mode') ?? 'default';
if (
  process.env.FAKE_ROOT_REFUSAL === '1' &&
  (permissionMode === 'bypassPermissions' || has('--dangerously-skip-permissions'))
) {
  process.stderr.write(
    '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n',
  );
  process.exit(1);
}

const MODEL = flag('--model') || 'claude-fake-1';
const TURN_COST = 0.0001;
const resumeId = flag('--resume');
const sessionId = flag('--session-id') || (resumeId && !has('--fork-session') ? resumeId : randomUUID());
const askPermission = flag('--permission-prompt-tool') === 'stdio' && permissionMode !== 'bypassPermissions';
const allowedTools = (flag('--allowedTools') ?? flag('--allowed-tools') ?? '').split(/[,\s]+/).filter(Boolean);

let totalCost = 0;
let resultIndex = 0;
let toolCounter = 0;
let requestCounter = 0;
let messageCounter = 0;
/** Abort controller of the turn being run, if any. */
let current = null;
/** Client uuid of the user message the current turn answers (echoed on its result like the real CLI), if any. */
let currentUuid;
const pendingPermissions = new Map();
const turns = [];
let running = false;
let stdinClosed = false;

const base = () => ({ session_id: sessionId, uuid: randomUUID() });

function init() {
  emit({
    type: 'system',
    subtype: 'init',
    cwd: process.cwd(),
    ...base(),
    tools: ['Task', 'Bash', 'Edit', 'Read', 'Write', 'AskUserQuestion'],
    mcp_servers: [],
    model: MODEL,
    permissionMode,
    slash_commands: [],
    apiKeySource: 'none',
    claude_code_version: '2.1.330-fake',
    output_style: 'default',
    agents: [],
    skills: [],
    plugins: [],
    capabilities: ['interrupt_receipt_v1'],
  });
}

function assistant(content, extra = {}) {
  messageCounter += 1;
  emit({
    type: 'assistant',
    message: {
      id: `msg_fake_${messageCounter}`,
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
    parent_tool_use_id: null,
    ...base(),
    ...extra,
  });
}

function toolResult(id, content, isError) {
  emit({
    type: 'user',
    message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content, is_error: isError }] },
    parent_tool_use_id: null,
    ...base(),
    tool_use_result: { stdout: isError ? '' : content, stderr: '', interrupted: false, isImage: false },
  });
}

function userNote(text) {
  emit({
    type: 'user',
    message: { role: 'user', content: [{ type: 'text', text }] },
    parent_tool_use_id: null,
    ...base(),
  });
}

function result(fields, cost = TURN_COST) {
  totalCost += cost;
  const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7 };
  emit({
    type: 'result',
    duration_ms: 42,
    duration_api_ms: 30,
    num_turns: 1,
    stop_reason: 'end_turn',
    total_cost_usd: totalCost,
    usage,
    modelUsage: {
      [MODEL]: { inputTokens: 10 * (resultIndex + 1), outputTokens: 7 * (resultIndex + 1), costUSD: totalCost },
    },
    model_usage_since_last_result: cost > 0 ? { [MODEL]: { inputTokens: 10, outputTokens: 7, costUSD: cost } } : {},
    permission_denials: [],
    queued_turn_count: turns.length,
    result_index: resultIndex,
    ...(currentUuid ? { user_message_uuid: currentUuid, user_message_uuids: [currentUuid] } : {}),
    ...base(),
    ...fields,
  });
  resultIndex += 1;
}

class Interrupted extends Error {}

/** Sleeps `ms`, rejecting with Interrupted when the turn is interrupted. */
function waitOrInterrupt(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Interrupted());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Interrupted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Asks the host for permission when the CLI would; resolves to {allow, message?}. */
async function permit(tool, input, toolUseId, signal) {
  if (!askPermission || allowedTools.includes(tool)) return { allow: true, input };
  requestCounter += 1;
  const requestId = `fake_perm_${requestCounter}`;
  const answer = new Promise((resolve, reject) => {
    pendingPermissions.set(requestId, resolve);
    signal.addEventListener('abort', () => reject(new Interrupted()), { once: true });
  });
  emit({
    type: 'control_request',
    request_id: requestId,
    request: { subtype: 'can_use_tool', tool_name: tool, input, tool_use_id: toolUseId, permission_suggestions: [] },
  });
  const response = await answer;
  if (response?.behavior === 'allow') return { allow: true, input: response.updatedInput ?? input };
  return { allow: false, message: response?.message ?? 'denied' };
}

/** Runs one tool call: tool_use, permission, (delay), tool_result. Returns the result text. */
async function runTool(name, input, output, delayMs, signal) {
  toolCounter += 1;
  const id = `toolu_fake_${toolCounter}`;
  assistant([{ type: 'tool_use', id, name, input }]);
  const decision = await permit(name, input, id, signal);
  if (!decision.allow) {
    toolResult(id, decision.message, true);
    return { id, text: decision.message, denied: true };
  }
  try {
    if (delayMs > 0) await waitOrInterrupt(delayMs, signal);
  } catch (error) {
    if (error instanceof Interrupted) {
      toolResult(id, "The user doesn't want to proceed with this tool use. The tool use was rejected.", true);
      error.duringTool = true;
    }
    throw error;
  }
  // The output may depend on the input the host allowed (AskUserQuestion's `answers`).
  const text = typeof output === 'function' ? output(decision.input) : output;
  toolResult(id, text, false);
  return { id, text, denied: false };
}

const GARBAGE = '{"type":"assistant","message":42}';

async function runTurn(prompt, signal) {
  if (replayCapture(prompt)) return;
  const names = new Set(parseDirectives(prompt).map((d) => d.name));
  // FAKE_IGNORE_SIGTERM=1 makes a hang survive SIGTERM, so only the SIGKILL escalation ends it. The handler goes in
  // before init is printed: a host may send SIGTERM as soon as it reads init.
  if (names.has('hang') && process.env.FAKE_IGNORE_SIGTERM === '1') process.on('SIGTERM', () => {});
  init();
  if (names.has('garbage')) writeGarbage(GARBAGE);
  if (names.has('hang')) await hang();
  const sleepMs = Number(directive(prompt, 'sleep') ?? 0);
  if (sleepMs > 0) await waitOrInterrupt(sleepMs, signal);
  if (names.has('crash')) {
    assistant([{ type: 'text', text: 'Working on it…' }]);
    process.stderr.write('fake-claude: simulated crash (segfault in the flux capacitor)\n');
    exitAfterFlush(3);
    await new Promise(() => {});
  }
  if (names.has('error')) {
    assistant([{ type: 'text', text: 'API Error: 400 fake bad request' }], { error: 'unknown' });
    result(
      {
        subtype: 'success',
        is_error: true,
        terminal_reason: 'api_error',
        api_error_status: 400,
        result: 'API Error: 400 fake bad request',
        stop_reason: 'stop_sequence',
      },
      0,
    );
    return 'exit';
  }
  if (names.has('budget')) {
    await runTool('Bash', { command: 'echo hello-from-tool' }, 'hello-from-tool', 0, signal);
    result({
      subtype: 'error_max_budget_usd',
      is_error: true,
      terminal_reason: 'budget_exhausted',
      stop_reason: 'tool_use',
      errors: [`Reached maximum budget ($${flag('--max-budget-usd') ?? '0.0001'})`],
    });
    return 'exit';
  }
  let reply = replyText('claude', prompt);
  if (names.has('tool')) {
    const tool = await runTool(
      'Bash',
      { command: 'echo hello-from-tool', description: 'echo' },
      'hello-from-tool',
      0,
      signal,
    );
    reply = `tool said: ${tool.text}`;
  }
  const slow = directive(prompt, 'slow-tool');
  if (slow !== undefined) {
    const ms = Number(slow || 1000);
    const tool = await runTool(
      'Bash',
      { command: `sleep ${ms / 1000}; echo slow-done`, description: 'slow' },
      'slow-done',
      ms,
      signal,
    );
    reply = `tool said: ${tool.text}`;
  }
  if (names.has('question')) {
    const question = 'Which file should I change?';
    const input = {
      questions: [
        {
          question,
          header: 'File',
          multiSelect: false,
          options: [
            { label: 'a.ts', description: 'the first' },
            { label: 'b.ts', description: 'the second' },
          ],
        },
      ],
    };
    const answered = (allowed) =>
      allowed?.answers
        ? `User has answered your questions: ${Object.entries(allowed.answers)
            .map(([q, a]) => `"${q}"="${a}"`)
            .join(', ')}`
        : 'User has not answered yet.';
    await runTool('AskUserQuestion', input, answered, 0, signal);
    reply = question;
  }
  const blocks = Number(directive(prompt, 'stream') ?? 0);
  if (blocks > 0) {
    for (let i = 1; i <= blocks; i += 1) {
      assistant([{ type: 'text', text: `block ${i} of ${blocks}` }]);
      if (names.has('garbage') && i === 1) writeGarbage(GARBAGE);
      await waitOrInterrupt(50, signal);
    }
  }
  assistant([{ type: 'text', text: reply }]);
  if (names.has('garbage')) writeGarbage(GARBAGE);
  result({ subtype: 'success', is_error: false, terminal_reason: 'completed', api_error_status: null, result: reply });
}

async function drain() {
  if (running) return;
  running = true;
  while (turns.length > 0) {
    const { prompt, uuid } = turns.shift();
    currentUuid = uuid;
    current = new AbortController();
    try {
      if ((await runTurn(prompt, current.signal)) === 'exit') {
        exitAfterFlush(1);
        return;
      }
    } catch (error) {
      if (!(error instanceof Interrupted)) throw error;
      userNote(error.duringTool ? '[Request interrupted by user for tool use]' : '[Request interrupted by user]');
      result({
        subtype: 'error_during_execution',
        is_error: true,
        terminal_reason: error.duringTool ? 'aborted_tools' : 'aborted_streaming',
        stop_reason: null,
        errors: [
          `[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=${error.duringTool ? 'tool_use' : 'null'}`,
        ],
      });
    }
    current = null;
    currentUuid = undefined;
  }
  running = false;
  if (stdinClosed) exitAfterFlush(0);
}

function promptOf(message) {
  const content = message?.message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .filter((b) => b?.type === 'text')
      .map((b) => b.text)
      .join('\n');
  return '';
}

function onLine(line) {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    process.stderr.write(`fake-claude: ignoring non-JSON stdin line\n`);
    return;
  }
  if (message.type === 'control_request') {
    const subtype = message.request?.subtype;
    let response = {};
    if (subtype === 'initialize') {
      response = {
        commands: [],
        agents: [],
        output_style: 'default',
        available_output_styles: ['default'],
        models: [],
        account: {},
        pid: process.pid,
      };
    } else if (subtype === 'interrupt') {
      response = { still_queued: [] };
      current?.abort();
    }
    emit({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response } });
    return;
  }
  if (message.type === 'control_response') {
    const resolve = pendingPermissions.get(message.response?.request_id);
    if (resolve) {
      pendingPermissions.delete(message.response.request_id);
      resolve(
        message.response?.subtype === 'success'
          ? message.response.response
          : { behavior: 'deny', message: message.response?.error ?? 'error' },
      );
    }
    return;
  }
  if (message.type === 'user') {
    turns.push({ prompt: promptOf(message), uuid: typeof message.uuid === 'string' ? message.uuid : undefined });
    void drain();
  }
}

const printPrompt = flag('-p') ?? flag('--print');
if (printPrompt && flag('--input-format') !== 'stream-json') {
  turns.push({ prompt: printPrompt, uuid: undefined });
  stdinClosed = true;
  void drain();
} else {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', onLine);
  rl.on('close', () => {
    stdinClosed = true;
    if (!running) exitAfterFlush(0);
  });
}

// Every text the NotificationRouter sends, as pure functions of the session record (and, for live sessions, how long
// the current run has taken). "Origin" texts are the Level-1 messages for the origin channel; "foreground" texts go
// to channels that stream the session live and have already seen its output.
import { formatDuration, truncate } from '../coding/format.ts';
import type { WaitingReason } from '../coding/session-log.ts';
import { toolUseLine } from '../coding/tool-summary.ts';
import type { StoredSession } from '../store/coding-session-types.ts';
import { outputPreview } from './preview.ts';

type SessionRecord = Readonly<StoredSession>;

/** Longest launch/resume prompt shown (seed: 80). */
const LAUNCH_PROMPT_CHARS = 80;
/** Longest prompt shown in end messages (seed: 60). */
const END_PROMPT_CHARS = 60;
/** Longest responded message shown (seed: 200). */
const RESPONDED_CHARS = 200;
/** Longest tail of output shown with an "asks"/waiting message (seed: 200). */
const ASK_TAIL_CHARS = 200;
/** Longest tail of output shown with a completion (seed: the 500-char preview). */
const COMPLETION_TAIL_CHARS = 500;

/** End reasons that say nothing the status does not already say. */
const PLAIN_END_REASONS = new Set(['single turn finished', 'agent exited', 'killed by user']);

/** What the router knows about why a session waits. */
export interface WaitingInfo {
  reason: WaitingReason;
  /** The output of the current turn (its last blocks); a tail of it is shown. */
  preview: string;
  /** The question the agent asked explicitly (a question tool), if it did this turn. */
  question?: string;
  /** The tool the agent asks permission for, when reason is `permission`. */
  permission?: { tool: string; input: unknown };
  /** The silence after which a session counts as stalled (timings.safetyNetMs). */
  quietMs: number;
}

function workdirLine(record: SessionRecord): string {
  return `   📁 ${record.workdir}`;
}

function promptLine(record: SessionRecord): string {
  return `   📝 "${truncate(record.spec.prompt || record.prompt, END_PROMPT_CHARS)}"`;
}

function costLine(record: SessionRecord): string {
  return `   💰 $${record.costUsd.toFixed(4)}`;
}

function endReasonLine(record: SessionRecord): string[] {
  return record.endReason && !PLAIN_END_REASONS.has(record.endReason) ? [`   ℹ️ ${record.endReason}`] : [];
}

function sessionLabel(record: SessionRecord): string {
  return `Session ${record.name} [${record.id}]`;
}

function permissionLines(name: string, info: WaitingInfo): string[] {
  const tool = info.permission ? toolUseLine(info.permission.tool, info.permission.input) : '🔧 a tool';
  return [tool, `Allow: /claude_respond ${name} yes`, `Deny: /claude_respond ${name} no, <why>`];
}

/** The reply hint a person can paste into the chat. */
function replyLine(name: string): string {
  return `   Reply: /claude_respond ${name} <message>`;
}

/** The hint under a stall: it is not a wait for input, but a message still reaches the agent. */
function nudgeLine(name: string): string {
  return `   It is not waiting for you. Nudge it: /claude_respond ${name} <message>, or stop it: /claude_kill ${name}`;
}

/** `↩️ [name] Launched:` / `Resumed:` / `Continued from <id>:` + the run's prompt (≤80). */
export function launchedText(record: SessionRecord, kind: 'launch' | 'resume'): string {
  // A new session continuing an earlier one is a fork of it, or (resume --anywhere) its continuation on another node.
  const continued = record.forked
    ? `Resumed as a fork of ${record.resumedFrom}`
    : `Continued from ${record.resumedFrom}`;
  const verb = kind === 'resume' ? 'Resumed' : record.resumedFrom ? continued : 'Launched';
  return `↩️ [${record.name}] ${verb}:\n${truncate(record.spec.prompt, LAUNCH_PROMPT_CHARS)}`;
}

/** `↩️ [name] Responded:` + the message (≤200); "Answered permission request" when it answered one. */
export function respondedText(name: string, message: string, answered: boolean): string {
  return `↩️ [${name}] ${answered ? 'Answered permission request' : 'Responded'}:\n${truncate(message, RESPONDED_CHARS)}`;
}

/**
 * The Level-1 waiting message. A question (explicit, or a last line ending in "?") is `🔔 [name] asks:` + the question
 * text or the tail of the output; a permission request names the tool and says how to answer; a turn that merely
 * ended is the quieter `💬 [name] is waiting for input:` + tail; a stall is `⏳ … has been silent …` (not a wait for input).
 */
export function originWaitingText(record: SessionRecord, info: WaitingInfo): string {
  const name = record.name;
  const tail = outputPreview(info.preview, ASK_TAIL_CHARS);
  const withTail = (head: string): string => (tail ? `${head}:\n${tail}` : `${head}.`);
  switch (info.reason) {
    case 'question':
      return info.question ? `🔔 [${name}] asks:\n${info.question.trim()}` : withTail(`🔔 [${name}] asks`);
    case 'permission':
      return [`🔔 [${name}] asks permission:`, ...permissionLines(name, info)].join('\n');
    case 'turn-end':
      return withTail(`💬 [${name}] is waiting for input`);
    case 'stalled':
      return withTail(
        `⏳ [${name}] has been silent for ${formatDuration(info.quietMs)} with no tool running (still thinking, or stuck)`,
      );
  }
}

/**
 * The waiting message for a channel that streams the session (it has seen the output, so no tail): `💬 Session name
 * [id] is waiting for input (dur)` + how to reply; an explicit question's text (not part of the output) is included.
 */
export function foregroundWaitingText(record: SessionRecord, runMs: number, info: WaitingInfo): string {
  const label = sessionLabel(record);
  const dur = formatDuration(runMs);
  const reply = replyLine(record.name);
  switch (info.reason) {
    case 'question':
      return info.question
        ? `💬 ${label} asks (${dur}):\n${info.question.trim()}\n${reply}`
        : `💬 ${label} is waiting for input (${dur})\n${reply}`;
    case 'permission':
      return [`💬 ${label} asks permission (${dur}):`, ...permissionLines(record.name, info)].join('\n');
    case 'turn-end':
      return `💬 ${label} is waiting for input (${dur})\n${reply}`;
    case 'stalled':
      return `⏳ ${label} has been silent for ${formatDuration(info.quietMs)} (${dur}) with no tool running (still thinking, or stuck)\n${nudgeLine(record.name)}`;
  }
}

/**
 * The Level-1 end message: `✅ [name] Completed` + 📁 + 💰 + a preview of the last turn's output (its tail, Markdown
 * stripped) — always, even when a waiting message quoted it before: the completion is the summary people act on —,
 * `❌ [name] Failed` + 📁 + 📝 + ⚠️ error, or `⛔ [name] Killed` + 📁 + 📝.
 */
export function originEndedText(record: SessionRecord, preview: string): string {
  const name = record.name;
  switch (record.status) {
    case 'completed': {
      const head = [`✅ [${name}] Completed`, workdirLine(record), costLine(record), ...endReasonLine(record)].join(
        '\n',
      );
      const tail = outputPreview(preview, COMPLETION_TAIL_CHARS);
      return tail ? `${head}\n\n${tail}` : head;
    }
    case 'failed':
      return [
        `❌ [${name}] Failed`,
        workdirLine(record),
        promptLine(record),
        `   ⚠️ ${record.error ?? record.endReason ?? 'unknown error'}`,
      ].join('\n');
    case 'killed':
      return [`⛔ [${name}] Killed`, workdirLine(record), promptLine(record), ...endReasonLine(record)].join('\n');
    case 'queued':
    case 'starting':
    case 'running':
    case 'interrupted':
      return `${name}: ${record.status}`;
    default:
      record.status satisfies never;
      return `${name}: ${String(record.status)}`;
  }
}

/** The end message for a channel that streamed the session: `✅ Session name [id] completed (dur)` + 📁 + 📝 (+ 💰 / ⚠️). */
export function foregroundEndedText(record: SessionRecord, runMs: number): string {
  const dur = formatDuration(runMs);
  const label = sessionLabel(record);
  switch (record.status) {
    case 'completed':
      return [
        `✅ ${label} completed (${dur})`,
        workdirLine(record),
        promptLine(record),
        costLine(record),
        ...endReasonLine(record),
      ].join('\n');
    case 'failed':
      return [
        `❌ ${label} failed (${dur})`,
        workdirLine(record),
        promptLine(record),
        `   ⚠️ ${record.error ?? record.endReason ?? 'unknown error'}`,
      ].join('\n');
    case 'killed':
      return [`⛔ ${label} killed (${dur})`, workdirLine(record), promptLine(record), ...endReasonLine(record)].join(
        '\n',
      );
    case 'queued':
    case 'starting':
    case 'running':
    case 'interrupted':
      return `${label} ${record.status} (${dur})`;
    default:
      record.status satisfies never;
      return `${label} ${String(record.status)} (${dur})`;
  }
}

/** `⛔ Session limit reached — name [id] (dur)` + 📁 + what it spent of its budget. */
export function budgetText(record: SessionRecord, runMs: number): string {
  return [
    `⛔ Session limit reached — ${record.name} [${record.id}] (${formatDuration(runMs)})`,
    workdirLine(record),
    `   💰 $${record.costUsd.toFixed(4)} spent of its $${record.spec.maxBudgetUsd.toFixed(2)} budget (maxBudgetUsd)`,
  ].join('\n');
}

/** `⏱️ Session name [id] running for dur` + 📁 + how to check on it or stop it. */
export function reminderText(record: SessionRecord, runMs: number): string {
  return [
    `⏱️ ${sessionLabel(record)} running for ${formatDuration(runMs)}`,
    workdirLine(record),
    `   Use claude_fg ${record.name} to check on it, or claude_kill ${record.name} to stop it.`,
  ].join('\n');
}

/**
 * `⏸️ [name] Interrupted` by a daemon restart (a crash found at startup) or stop (`runMs` known) + 📁 + 📝 + how to
 * resume it (or why it cannot be: its agent never reported a session id).
 */
export function interruptedText(
  record: SessionRecord,
  cause: { kind: 'restart' } | { kind: 'stop'; runMs: number },
): string {
  const lost = record.endReason?.match(/^node (\S+) lost$/);
  const head =
    cause.kind === 'restart'
      ? lost
        ? `⏸️ [${record.name}] Interrupted: node ${lost[1]} was lost`
        : `⏸️ [${record.name}] Interrupted by a daemon restart`
      : `⏸️ [${record.name}] Interrupted: the daemon is stopping (${formatDuration(cause.runMs)})`;
  const resume = record.backendSessionId
    ? `   ↩️ It can be resumed: claude_resume ${record.name}`
    : '   It stopped before its agent started, so it cannot be resumed; launch it again.';
  return [head, workdirLine(record), promptLine(record), resume].join('\n');
}

// What the notifications and approval requests of `codex app-server` (see app-server-protocol.ts) become as HarnessEvents.
//
// Items are converted to the `codex exec --json` item shapes and go through the same CodexItemEvents (tool, toolResult,
// text); a turn ends at turn/completed (status completed → ok, interrupted → interrupted, failed → codexFailure of its
// error); its usage is the difference of the thread totals in the last thread/tokenUsage/updated, as in exec.
//
// Approval requests become `permission` events named as Claude Code names the tools, so Claude permission rules apply:
//   item/commandExecution/requestApproval → tool `Bash`, input {command, cwd?, reason?}; `command` is what the model
//     asked to run: Codex's `/bin/bash -lc '<script>'` wrapper is taken off, so `Bash(npm test:*)` matches `npm test`.
//   item/fileChange/requestApproval → tool `Edit`, input {file_path?, file_paths, changes:[{path, kind, diff?}],
//     reason?, grant_root?}; the paths come from the fileChange item started before the request; `file_path` is set
//     only for a patch of one file, so a rule on a path (`Edit(src/**)`) never allows a patch that also touches others.
import { isAbsolute, relative, resolve } from 'node:path';
import type { HarnessEvent, TurnOutcome, Usage } from '../harness.ts';
import type { KnownNotification, NotificationParams, RequestParams, ThreadItem } from './app-server-protocol.ts';
import { NOTIFICATION_SCHEMAS, SHOWN_ITEM_TYPES, threadItemSchema } from './app-server-protocol.ts';
import type { CodexItem } from './codex-events.ts';
import { codexFailure, CodexItemEvents, shorten } from './codex-events.ts';
import type { CodexUsageTotals, CodexUsageTracker } from './codex-usage.ts';

/** An app-server item the harness shows, in the shape of the matching `codex exec --json` item. */
export function execItem(item: ThreadItem): CodexItem {
  switch (item.type) {
    case 'agentMessage':
      return { type: 'agent_message', id: item.id, text: item.text };
    case 'commandExecution':
      return {
        type: 'command_execution',
        id: item.id,
        command: item.command,
        ...(item.aggregatedOutput != null ? { aggregated_output: item.aggregatedOutput } : {}),
        exit_code: item.exitCode ?? null,
        status: item.status,
      };
    case 'fileChange':
      return {
        type: 'file_change',
        id: item.id,
        changes: item.changes.map((c) => ({ path: c.path, kind: c.kind.type })),
        status: item.status,
      };
    case 'mcpToolCall':
      return {
        type: 'mcp_tool_call',
        id: item.id,
        server: item.server,
        tool: item.tool,
        arguments: item.arguments,
        result: item.result
          ? {
              ...(item.result.content ? { content: item.result.content } : {}),
              ...(item.result.structuredContent !== undefined
                ? { structured_content: item.result.structuredContent }
                : {}),
            }
          : null,
        error: item.error ?? null,
        status: item.status,
      };
    case 'webSearch':
      return { type: 'web_search', id: item.id, query: item.query };
  }
}

/**
 * The single argument of `bash|sh|zsh -c|-lc <arg>` with its shell quoting removed; `command` itself when it is not
 * such a wrapper or the rest is not exactly one shell word.
 */
export function unwrapShell(command: string): string {
  const match = /^(?:\/\S*\/)?(?:bash|sh|zsh) -l?c (.+)$/s.exec(command);
  const word = match?.[1];
  if (word === undefined) return command;
  let out = '';
  let i = 0;
  while (i < word.length) {
    const ch = word[i] as string;
    if (ch === "'") {
      const end = word.indexOf("'", i + 1);
      if (end < 0) return command;
      out += word.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      i += 1;
      for (; i < word.length && word[i] !== '"'; i += 1) {
        if (word[i] === '\\' && /["\\$`]/.test(word[i + 1] ?? '')) i += 1;
        out += word[i];
      }
      if (i >= word.length) return command;
      i += 1;
    } else if (ch === '\\') {
      out += word[i + 1] ?? '';
      i += 2;
    } else if (/\s/.test(ch) || /[;&|<>()$`]/.test(ch)) {
      return command;
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}

type PermissionEvent = HarnessEvent & { type: 'permission' };

/** The `permission` event of a command approval request (see the top of this file). */
export function commandPermission(
  requestId: string,
  params: RequestParams<'item/commandExecution/requestApproval'>,
): PermissionEvent {
  const command =
    params.command ??
    (params.commandActions ?? [])
      .map((a) => a.command)
      .filter(Boolean)
      .join(' && ');
  const input = {
    command: unwrapShell(command),
    ...(params.cwd ? { cwd: params.cwd } : {}),
    ...(params.reason ? { reason: params.reason } : {}),
  };
  return { type: 'permission', requestId, tool: 'Bash', input };
}

/** The `permission` event of a patch approval request; `item` is the fileChange item it is about, when known. */
export function patchPermission(
  requestId: string,
  params: RequestParams<'item/fileChange/requestApproval'>,
  item: Extract<ThreadItem, { type: 'fileChange' }> | undefined,
): PermissionEvent {
  const changes = (item?.changes ?? []).map((c) => ({
    path: c.path,
    kind: c.kind.type,
    ...(c.diff !== undefined ? { diff: c.diff } : {}),
  }));
  const paths = changes.map((c) => c.path);
  const input = {
    ...(paths.length === 1 ? { file_path: paths[0] } : {}),
    file_paths: paths,
    changes,
    ...(params.reason ? { reason: params.reason } : {}),
    ...(params.grantRoot ? { grant_root: params.grantRoot } : {}),
  };
  return { type: 'permission', requestId, tool: 'Edit', input };
}

/** True when the patch `item` changes at least one file and every path lies inside `workdir`. */
export function patchInside(item: Extract<ThreadItem, { type: 'fileChange' }> | undefined, workdir: string): boolean {
  if (!item || item.changes.length === 0) return false;
  return item.changes.every((c) => {
    const rel = relative(workdir, resolve(workdir, c.path));
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  });
}

/** The outcome of a completed turn's status and error. */
export function turnOutcome(
  status: NotificationParams<'turn/completed'>['turn']['status'],
  error: { message: string; codexErrorInfo?: unknown } | null | undefined,
): TurnOutcome {
  switch (status) {
    case 'completed':
      return { ok: true };
    case 'interrupted':
      return { ok: false, reason: 'interrupted', message: 'interrupted' };
    case 'failed':
    case 'inProgress': {
      const failure = codexFailure(error?.message ?? `the turn ended ${status}`);
      const status_ = httpStatus(error?.codexErrorInfo);
      return failure.apiErrorStatus === undefined && status_ !== undefined
        ? { ...failure, reason: 'api_error', apiErrorStatus: status_ }
        : failure;
    }
  }
}

/** The `httpStatusCode` in a codexErrorInfo such as {responseStreamConnectionFailed:{httpStatusCode:429}}. */
function httpStatus(info: unknown): number | undefined {
  if (!info || typeof info !== 'object') return undefined;
  for (const value of Object.values(info)) {
    const code = (value as { httpStatusCode?: unknown } | null)?.httpStatusCode;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/**
 * Turns the notifications of one app-server connection into HarnessEvents; remembers the items in flight (a patch
 * approval names only its item) and the thread's last token totals of the current turn. `usage` spans the run.
 */
export class AppServerEvents {
  #usage: CodexUsageTracker;
  #items = new CodexItemEvents();
  #fileChanges = new Map<string, Extract<ThreadItem, { type: 'fileChange' }>>();
  #totals: CodexUsageTotals | undefined;

  constructor(options: { usage: CodexUsageTracker }) {
    this.#usage = options.usage;
  }

  /** The fileChange item with this id, once it has started. */
  fileChange(itemId: string): Extract<ThreadItem, { type: 'fileChange' }> | undefined {
    return this.#fileChanges.get(itemId);
  }

  /** The events of one notification (a `warning` with `malformed` when a known one fails its schema). */
  notification(method: string, params: unknown): HarnessEvent[] {
    if (!Object.hasOwn(NOTIFICATION_SCHEMAS, method)) return [{ type: 'activity' }];
    const known = method as KnownNotification;
    const parsed = NOTIFICATION_SCHEMAS[known].safeParse(params);
    if (!parsed.success)
      return [
        {
          type: 'warning',
          malformed: true,
          message: `dropped a malformed Codex app-server "${method}": ${shorten(JSON.stringify(params) ?? '')}`,
        },
      ];
    return this.#known(known, parsed.data);
  }

  #known(method: KnownNotification, data: unknown): HarnessEvent[] {
    switch (method) {
      case 'item/started':
      case 'item/completed': {
        const { item } = data as NotificationParams<'item/started'>;
        return this.#item(method === 'item/started' ? 'started' : 'completed', item);
      }
      case 'thread/tokenUsage/updated': {
        const { total } = (data as NotificationParams<'thread/tokenUsage/updated'>).tokenUsage;
        this.#totals = {
          input_tokens: total.inputTokens,
          cached_input_tokens: total.cachedInputTokens ?? 0,
          output_tokens: total.outputTokens,
        };
        return [{ type: 'activity' }];
      }
      case 'turn/completed': {
        const { turn } = data as NotificationParams<'turn/completed'>;
        const totals = this.#totals;
        this.#totals = undefined;
        this.#fileChanges.clear();
        const usage: Usage | undefined = totals ? this.#usage.turnUsage(totals) : undefined;
        const outcome = turnOutcome(turn.status, turn.error);
        return [{ type: 'turnEnd', outcome, costUsd: 0, ...(usage ? { usage } : {}) }];
      }
      case 'error': {
        const { error, willRetry } = data as NotificationParams<'error'>;
        return [{ type: 'warning', message: `Codex error${willRetry ? ' (retrying)' : ''}: ${error.message}` }];
      }
      case 'warning':
        return [{ type: 'warning', message: `Codex warning: ${(data as NotificationParams<'warning'>).message}` }];
      case 'configWarning':
        return [{ type: 'warning', message: `Codex config: ${(data as NotificationParams<'configWarning'>).summary}` }];
      case 'turn/started':
      case 'serverRequest/resolved':
        return [{ type: 'activity' }];
      default:
        method satisfies never;
        return [{ type: 'activity' }];
    }
  }

  #item(phase: 'started' | 'completed', raw: { type: string }): HarnessEvent[] {
    if (!SHOWN_ITEM_TYPES.has(raw.type)) return [{ type: 'activity' }];
    const parsed = threadItemSchema.safeParse(raw);
    if (!parsed.success)
      return [
        {
          type: 'warning',
          malformed: true,
          message: `dropped a malformed Codex app-server ${raw.type} item: ${shorten(JSON.stringify(raw))}`,
        },
      ];
    const item = parsed.data;
    if (item.type === 'fileChange') this.#fileChanges.set(item.id, item);
    return this.#items.events(phase, execItem(item));
  }
}

// The requests `codex app-server` sends the client (approvals, request_user_input, and those switchboard does not offer),
// the ones still waiting for an answer, and the replies. Approvals become `permission` events (app-server-events.ts)
// whose requestId is `<turnId>:<JSON-RPC id>` (unique across the runs of a session: JSON-RPC ids restart with each
// process). acceptEdits accepts a patch inside the workdir at once. Every request not offered gets a JSON-RPC error, so
// the server never waits on it.
import type { HarnessEvent, PermissionDecision } from '../harness.ts';
import { commandPermission, patchInside, patchPermission } from './app-server-events.ts';
import type { ApprovalAnswer, RequestParams, RpcId, ThreadItem } from './app-server-protocol.ts';
import { REQUEST_SCHEMAS, textInput } from './app-server-protocol.ts';
import type { CodexApprovalMode } from './codex-args.ts';
import { shorten } from './codex-events.ts';

/** A JSON-RPC message to write to the server. */
export type Reply = Record<string, unknown>;

/** What a server request comes to: the reply to write now (none while a person decides) and the events to tell. */
export interface Handled {
  reply?: Reply;
  events: HarnessEvent[];
}

/** A deny's reason, given to the model as user input on the approval's turn (`turn/steer` params). */
export interface Steer {
  threadId: string;
  expectedTurnId: string;
  input: ReturnType<typeof textInput>;
}

/** What the requests need from the run: its mode and workdir, and the fileChange items started so far. */
export interface AppServerRequestsOptions {
  mode: CodexApprovalMode;
  workdir: string;
  fileChange: (itemId: string) => Extract<ThreadItem, { type: 'fileChange' }> | undefined;
}

/** The server requests of one connection; see the top of this file. */
export class AppServerRequests {
  #options: AppServerRequestsOptions;
  #approvals = new Map<string, { rpcId: RpcId; threadId: string; turnId: string }>();
  #question: { rpcId: RpcId; ids: string[] } | null = null;

  constructor(options: AppServerRequestsOptions) {
    this.#options = options;
  }

  /** Handles one server request. */
  request(rpcId: RpcId, method: string, params: unknown): Handled {
    if (!Object.hasOwn(REQUEST_SCHEMAS, method)) {
      return {
        reply: { id: rpcId, error: { code: -32601, message: `switchboard does not handle ${method}` } },
        events: [{ type: 'warning', message: `Codex asked for ${method}, which switchboard does not handle; refused` }],
      };
    }
    const known = method as keyof typeof REQUEST_SCHEMAS;
    const parsed = REQUEST_SCHEMAS[known].safeParse(params);
    if (!parsed.success) {
      const message = `dropped a malformed Codex ${method}: ${shorten(JSON.stringify(params) ?? '')}`;
      return {
        reply: { id: rpcId, error: { code: -32602, message: `switchboard could not read ${method}` } },
        events: [{ type: 'warning', malformed: true, message }],
      };
    }
    const { threadId, turnId } = parsed.data;
    const requestId = `${turnId}:${rpcId}`;
    switch (known) {
      case 'item/commandExecution/requestApproval': {
        this.#approvals.set(requestId, { rpcId, threadId, turnId });
        const data = parsed.data as RequestParams<'item/commandExecution/requestApproval'>;
        return { events: [commandPermission(requestId, data)] };
      }
      case 'item/fileChange/requestApproval': {
        const data = parsed.data as RequestParams<'item/fileChange/requestApproval'>;
        const item = this.#options.fileChange(data.itemId);
        if (this.#options.mode.acceptEditsInWorkdir && patchInside(item, this.#options.workdir))
          return { reply: decisionReply(rpcId, 'accept'), events: [{ type: 'activity' }] };
        this.#approvals.set(requestId, { rpcId, threadId, turnId });
        return { events: [patchPermission(requestId, data, item)] };
      }
      case 'item/tool/requestUserInput': {
        const { questions } = parsed.data as RequestParams<'item/tool/requestUserInput'>;
        this.#question = { rpcId, ids: questions.map((q) => q.id) };
        return { events: [{ type: 'question', text: questions.map((q) => q.question).join('\n') }] };
      }
      default:
        known satisfies never;
        return { events: [] };
    }
  }

  /** The reply that answers the pending request_user_input with `text` for every question; null when none waits. */
  answerQuestion(text: string): Reply | null {
    const question = this.#question;
    if (!question) return null;
    this.#question = null;
    const answers = Object.fromEntries(question.ids.map((id) => [id, { answers: [text] }]));
    return { id: question.rpcId, result: { answers } };
  }

  /**
   * The reply to a pending approval (allow → accept, deny → decline; an allow's `updatedInput` cannot change what Codex
   * runs) and, for a deny with a message, the steer that gives the model the reason. Null when it is not pending (answered,
   * or resolved by the server, e.g. on an interrupt).
   */
  answer(requestId: string, decision: PermissionDecision): { reply: Reply; steer?: Steer } | null {
    const approval = this.#approvals.get(requestId);
    if (!approval) return null;
    this.#approvals.delete(requestId);
    const reply = decisionReply(approval.rpcId, decision.allow ? 'accept' : 'decline');
    const reason = decision.allow ? '' : decision.message.trim();
    if (!reason) return { reply };
    const input = textInput(`Permission denied: ${reason}`);
    return { reply, steer: { threadId: approval.threadId, expectedTurnId: approval.turnId, input } };
  }

  /** Forgets a request the server resolved itself (serverRequest/resolved). */
  resolved(rpcId: unknown): void {
    for (const [key, approval] of this.#approvals) if (approval.rpcId === rpcId) this.#approvals.delete(key);
    if (this.#question?.rpcId === rpcId) this.#question = null;
  }

  /** Forgets every pending request (the turn is over). */
  clear(): void {
    this.#approvals.clear();
    this.#question = null;
  }
}

function decisionReply(rpcId: RpcId, decision: ApprovalAnswer): Reply {
  return { id: rpcId, result: { decision } };
}

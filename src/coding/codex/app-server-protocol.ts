// The stdio protocol of `codex app-server` (Codex CLI 0.169; `codex app-server generate-ts` prints all of it): JSON-RPC
// 2.0 messages without the "jsonrpc" member, one per line, both ways.
//   client → server requests: initialize{clientInfo,capabilities} (then the notification `initialized`),
//     thread/start{cwd,model,approvalPolicy,sandbox} | thread/resume{threadId,…} → {thread:{id},model},
//     turn/start{threadId,input:[{type:"text",text,text_elements:[]}]} → {turn:{id}},
//     turn/interrupt{threadId,turnId}, turn/steer{threadId,expectedTurnId,input}
//   server → client requests (answered with {id,result}):
//     item/commandExecution/requestApproval{threadId,turnId,itemId,command,cwd,reason} → {decision:"accept"|"decline"|…}
//     item/fileChange/requestApproval{threadId,turnId,itemId,reason,grantRoot} → {decision:"accept"|"decline"|…}
//     item/tool/requestUserInput{threadId,turnId,itemId,questions:[{id,question}]} → {answers:{<id>:{answers:[…]}}}
//     and others this harness does not offer (answered with a JSON-RPC error, see app-server-requests.ts)
//   server notifications: turn/started{turn}, item/started|item/completed{item,turnId}, turn/completed{turn:{id,status,
//     error}}, thread/tokenUsage/updated{tokenUsage:{total,last}}, error{error,willRetry}, warning{message},
//     serverRequest/resolved{requestId}, and many deltas and status pings.
// A decision carries no reason: a deny's message is sent to the turn with turn/steer (see app-server-requests.ts).
import { z } from 'zod';
import { decodeObjectLine, isObject } from '../json-line.ts';

/** A JSON-RPC id as the server sends it. */
export type RpcId = string | number;

/** One decoded line from the server. */
export type AppServerMessage =
  | { kind: 'response'; id: RpcId; result: unknown }
  | { kind: 'error'; id: RpcId; message: string }
  | { kind: 'request'; id: RpcId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown };

/** Decodes one stdout line of the app-server; returns the message or why the line is malformed. */
export function decodeAppServerLine(
  line: string,
): { ok: true; message: AppServerMessage } | { ok: false; error: string } {
  const decoded = decodeObjectLine(line);
  if (!decoded.ok) return decoded;
  const raw = decoded.value;
  const id = raw.id;
  const hasId = typeof id === 'string' || typeof id === 'number';
  if (typeof raw.method === 'string') {
    return hasId
      ? { ok: true, message: { kind: 'request', id, method: raw.method, params: raw.params } }
      : { ok: true, message: { kind: 'notification', method: raw.method, params: raw.params } };
  }
  if (!hasId) return { ok: false, error: 'neither a "method" nor an "id"' };
  if (isObject(raw.error)) {
    const message = typeof raw.error.message === 'string' ? raw.error.message : JSON.stringify(raw.error);
    return { ok: true, message: { kind: 'error', id, message } };
  }
  return { ok: true, message: { kind: 'response', id, result: raw.result } };
}

const id = z.string().min(1);
const nullableString = z.string().nullish();

/** Items of a turn as far as the harness shows them (other item types are only activity). */
export const threadItemSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('agentMessage'), id, text: z.string() }),
  z.object({
    type: z.literal('commandExecution'),
    id,
    command: z.string(),
    aggregatedOutput: nullableString,
    exitCode: z.number().int().nullish(),
    status: z.string(),
  }),
  z.object({
    type: z.literal('fileChange'),
    id,
    changes: z.array(z.object({ path: z.string(), kind: z.object({ type: z.string() }), diff: z.string().optional() })),
    status: z.string(),
  }),
  z.object({
    type: z.literal('mcpToolCall'),
    id,
    server: z.string(),
    tool: z.string(),
    arguments: z.unknown().optional(),
    result: z.object({ content: z.array(z.unknown()).optional(), structuredContent: z.unknown().optional() }).nullish(),
    error: z.object({ message: z.string() }).nullish(),
    status: z.string(),
  }),
  z.object({ type: z.literal('webSearch'), id, query: z.string() }),
]);

/** One item the harness shows. */
export type ThreadItem = z.infer<typeof threadItemSchema>;

/** The item types `threadItemSchema` knows; any other type is passed over. */
export const SHOWN_ITEM_TYPES: ReadonlySet<string> = new Set(threadItemSchema.options.map((o) => o.shape.type.value));

const tokenBreakdown = z.object({
  inputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative().optional(),
  outputTokens: z.number().int().nonnegative(),
});

const turnError = z.object({ message: z.string(), codexErrorInfo: z.unknown().optional() });

/** The notifications the harness reads, by method. */
export const NOTIFICATION_SCHEMAS = {
  'turn/started': z.object({ threadId: id, turn: z.object({ id }) }),
  'turn/completed': z.object({
    threadId: id,
    turn: z.object({
      id,
      status: z.enum(['completed', 'interrupted', 'failed', 'inProgress']),
      error: turnError.nullish(),
    }),
  }),
  'item/started': z.object({ turnId: z.string(), item: z.looseObject({ type: z.string() }) }),
  'item/completed': z.object({ turnId: z.string(), item: z.looseObject({ type: z.string() }) }),
  'thread/tokenUsage/updated': z.object({ turnId: z.string(), tokenUsage: z.object({ total: tokenBreakdown }) }),
  error: z.object({ error: turnError, willRetry: z.boolean().optional() }),
  warning: z.object({ message: z.string() }),
  configWarning: z.object({ summary: z.string(), details: nullableString }),
  'serverRequest/resolved': z.object({ requestId: z.union([z.string(), z.number()]) }),
} as const;

/** A notification method the harness reads. */
export type KnownNotification = keyof typeof NOTIFICATION_SCHEMAS;

/** The server → client requests the harness answers, by method. */
export const REQUEST_SCHEMAS = {
  'item/commandExecution/requestApproval': z.object({
    threadId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    command: nullableString,
    cwd: nullableString,
    reason: nullableString,
    commandActions: z.array(z.looseObject({ command: z.string().optional() })).nullish(),
  }),
  'item/fileChange/requestApproval': z.object({
    threadId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    reason: nullableString,
    grantRoot: nullableString,
  }),
  'item/tool/requestUserInput': z.object({
    threadId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    questions: z.array(z.object({ id: z.string(), question: z.string(), header: z.string().optional() })),
  }),
} as const;

/** A server request method the harness answers (every other one gets a JSON-RPC error). */
export type KnownRequest = keyof typeof REQUEST_SCHEMAS;

/** The params of a known request. */
export type RequestParams<M extends KnownRequest> = z.infer<(typeof REQUEST_SCHEMAS)[M]>;

/** The params of a known notification. */
export type NotificationParams<M extends KnownNotification> = z.infer<(typeof NOTIFICATION_SCHEMAS)[M]>;

/** A text user input of turn/start and turn/steer. */
export function textInput(text: string): { type: 'text'; text: string; text_elements: [] }[] {
  return [{ type: 'text', text, text_elements: [] }];
}

/** The `decision` of an approval answer: accept runs the call once; decline refuses it and the turn goes on. */
export type ApprovalAnswer = 'accept' | 'decline';

/** The result of `thread/start` and `thread/resume`, as far as the harness reads it. */
export const threadResultSchema = z.object({ thread: z.object({ id }), model: z.string().optional() });

/** The result of `turn/start`. */
export const turnResultSchema = z.object({ turn: z.object({ id }) });

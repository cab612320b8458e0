// Requests for a session another node of the cluster runs: its agent process, live state and pending approvals live
// there, so send, kill, resume and an approval's decision are forwarded to that node (through the cluster's durable
// command queue) and answered with what that node answered. On SQLite, and for sessions of this node, nothing moves.
import type { ForwardedRequest } from '../cluster/cluster-sessions.ts';
import { notFound } from '../core/errors.ts';
import { isActiveStatus } from '../store/coding-session-types.ts';
import { parseOperationInput } from './input.ts';
import type { Caller, Operation, OperationContext, OperationServices } from './operation.ts';

/**
 * When session `ref` runs (or, with `ended: true`, ran) on another node, runs operation `operation` with `args` there
 * and resolves with its answer (`T`: what the operation returns); undefined when it is this node's to run (no cluster,
 * a session of this node, still queued, or ended and `ended` not set, or a request already forwarded here). A resume
 * sets `ended`: the agent's own history is on the node that ran it.
 */
export async function onSessionNode<T>(
  ctx: OperationContext,
  ref: string,
  operation: string,
  args: Record<string, unknown>,
  options: { ended?: boolean } = {},
): Promise<T | undefined> {
  const { clusterSessions, sessions } = ctx.services;
  if (!clusterSessions || ctx.routedFrom !== undefined) return undefined;
  const record = await sessions.get(ref);
  if (!record.node || record.node === clusterSessions.name || sessions.liveById(record.id)) return undefined;
  if (!options.ended && !isActiveStatus(record.status)) return undefined;
  const request: ForwardedRequest = { operation, args, caller: ctx.caller, from: clusterSessions.name };
  return (await clusterSessions.forward(record.node, request)) as T;
}

/** `onSessionNode` for the session of approval `id` (looked up among the pending ones: only those can be decided). */
export async function onApprovalNode<T>(
  ctx: OperationContext,
  id: string,
  operation: string,
  args: Record<string, unknown>,
): Promise<T | undefined> {
  const { clusterSessions, approvals } = ctx.services;
  if (!clusterSessions || !approvals || ctx.routedFrom !== undefined) return undefined;
  const pending = (await approvals.list({ status: 'pending', limit: 500 })).find((a) => a.id === id);
  return pending ? onSessionNode<T>(ctx, pending.sessionId, operation, args) : undefined;
}

/** Runs a request another node forwarded here, as the operation it names, for the caller it names. */
export async function runForwarded(
  ops: readonly Operation[],
  services: OperationServices,
  request: ForwardedRequest,
): Promise<unknown> {
  const op = ops.find((o) => o.name === request.operation);
  if (!op) throw notFound(`operation ${request.operation}: not known to this node`);
  const ctx = { caller: request.caller as Caller, services, routedFrom: request.from };
  return op.run(ctx, parseOperationInput(op, request.args));
}

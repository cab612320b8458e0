// The approval operations: list requests, approve or deny one (from chat, CLI, RPC, the web page or — when
// approvals.agentMayDecide is true — the orchestrator), and list or remove the stored "Always" rules.
import { z } from 'zod';
import type { Approval, ApprovalDecision, ApprovalRule, DecisionResult } from '../approvals/approval.ts';
import { approvalLine, outcomeText } from '../approvals/approval-text.ts';
import type { Config } from '../core/config.ts';
import { invalidInput } from '../core/errors.ts';
import type { OperationContext } from './operation.ts';
import { deciderOf, defineOperation } from './operation.ts';
import { onApprovalNode } from './remote.ts';

const STATUSES = ['pending', 'allowed', 'denied', 'expired', 'cancelled'] as const;
const SCOPES = ['once', 'session', 'always'] as const;
/** The decision each scope of `approve` stands for. */
const SCOPE_DECISIONS: Record<(typeof SCOPES)[number], ApprovalDecision> = {
  once: 'allow',
  session: 'allow-session',
  always: 'always',
};
const approvalId = z.string().trim().min(1, 'give the approval id (see /approvals)').max(64);

/** Lists approval requests, newest first. */
export const approvalsOperation = defineOperation({
  name: 'approvals',
  summary: 'List approval requests (newest first)',
  input: z.strictObject({
    session: z.string().trim().min(1).optional().describe('only this session (id or name)'),
    status: z.enum(STATUSES).optional().describe('only this status'),
    limit: z.number().int().min(1).max(500).optional().describe('at most this many (default 50)'),
  }),
  needs: ['approvals'],
  expose: {
    tool: 'approvals',
    command: { name: 'approvals', positional: ['session'], usage: '/approvals [session]' },
    rpc: 'approvals.list',
    cli: { name: 'approvals', args: [] },
  },
  async run(ctx, args): Promise<{ approvals: Approval[] }> {
    const sessionId = args.session ? (await ctx.services.sessions.get(args.session)).id : undefined;
    const approvals = await ctx.services.approvals.list({
      ...(sessionId ? { sessionId } : {}),
      ...(args.status ? { status: args.status } : {}),
      ...(args.limit ? { limit: args.limit } : {}),
    });
    return { approvals };
  },
  format(r) {
    return r.approvals.length === 0 ? 'No approval requests.' : r.approvals.map(approvalLine).join('\n');
  },
});

/** Deciding (and removing rules) is offered to the orchestrator only with `approvals.agentMayDecide`. */
function agentMayDecide(config: Config): boolean {
  return config.approvals.agentMayDecide;
}

/** What deciding answered, as every surface shows it. */
function decisionReply(r: DecisionResult): string {
  if (r.outcome === 'already') return `ℹ️ Approval ${r.approval.id} was already decided: ${outcomeText(r.approval)}`;
  return approvalLine(r.approval);
}

async function decide(
  ctx: OperationContext<'approvals'>,
  id: string,
  decision: ApprovalDecision,
  extra: { message?: string; answers?: string[] },
): Promise<DecisionResult> {
  return ctx.services.approvals.decide({ id, decision, ...extra, by: deciderOf(ctx.caller) });
}

/** Allows a pending request: once, for the rest of the session, or always (a rule for the workspace root). */
export const approveOperation = defineOperation({
  name: 'approve',
  summary: 'Allow a pending approval request (once, for the session, or always); answer a question',
  input: z.strictObject({
    id: approvalId,
    scope: z
      .string()
      .trim()
      .max(500)
      .optional()
      .describe('once (default), session or always; for a question, the chosen option number(s), one per question'),
    answers: z.array(z.string().max(500)).max(10).optional().describe('a question: one answer per question'),
  }),
  needs: ['approvals'],
  offeredToAgent: agentMayDecide,
  expose: {
    tool: 'approve',
    command: { name: 'approve', positional: ['id', 'scope'], usage: '/approve <id> [session|always|<option>]' },
    rpc: 'approvals.approve',
    cli: {
      name: 'approve',
      args: ['<id>', '[scope]'],
      hide: ['answers'],
      switches: {
        session: { key: 'scope', value: 'session', description: 'allow it for the rest of the session' },
        always: { key: 'scope', value: 'always', description: 'allow it always (a rule for the workspace root)' },
      },
    },
  },
  async run(ctx, args): Promise<DecisionResult> {
    const remote = await onApprovalNode<DecisionResult>(ctx, args.id, 'approve', args);
    if (remote) return remote;
    const scope = args.scope?.trim() ?? '';
    const isScope = scope === '' || (SCOPES as readonly string[]).includes(scope.toLowerCase());
    if (args.answers || !isScope) {
      // A question's answer: the option numbers (or labels) given, one per question.
      const answers = args.answers ?? scope.split(/\s*;\s*|\s+/).filter(Boolean);
      return decide(ctx, args.id, 'allow', { answers });
    }
    return decide(ctx, args.id, SCOPE_DECISIONS[(scope.toLowerCase() || 'once') as (typeof SCOPES)[number]], {});
  },
  format: decisionReply,
});

/** Denies a pending request; the message reaches the agent as the reason. */
export const denyOperation = defineOperation({
  name: 'deny',
  summary: 'Deny a pending approval request (the message reaches the agent as the reason)',
  input: z.strictObject({
    id: approvalId,
    message: z.string().trim().max(2_000).optional().describe('the reason the agent receives'),
  }),
  needs: ['approvals'],
  offeredToAgent: agentMayDecide,
  expose: {
    tool: 'deny',
    command: { name: 'deny', positional: ['id', 'message'], usage: '/deny <id> [message]' },
    rpc: 'approvals.deny',
    cli: { name: 'deny', args: ['<id>', '[message...]'] },
  },
  async run(ctx, args): Promise<DecisionResult> {
    const remote = await onApprovalNode<DecisionResult>(ctx, args.id, 'deny', args);
    if (remote) return remote;
    return decide(ctx, args.id, 'deny', args.message ? { message: args.message } : {});
  },
  format: decisionReply,
});

/** Decides a request by naming the decision (the RPC shape other tools build on). */
export const approvalDecideOperation = defineOperation({
  name: 'approval_decide',
  summary: 'Decide a pending approval request: allow, allow-session, always or deny',
  input: z.strictObject({
    id: approvalId,
    decision: z.enum(['allow', 'allow-session', 'always', 'deny']),
    message: z.string().trim().max(2_000).optional().describe('deny: the reason the agent receives'),
    answers: z.array(z.string().max(500)).max(10).optional().describe('a question: one answer per question'),
  }),
  needs: ['approvals'],
  expose: { rpc: 'approvals.decide' },
  async run(ctx, args): Promise<DecisionResult> {
    if (args.decision !== 'deny' && args.message)
      throw invalidInput('message: only a deny carries a message', 'message');
    const remote = await onApprovalNode<DecisionResult>(ctx, args.id, 'approval_decide', args);
    if (remote) return remote;
    return decide(ctx, args.id, args.decision, {
      ...(args.message ? { message: args.message } : {}),
      ...(args.answers ? { answers: args.answers } : {}),
    });
  },
  format: decisionReply,
});

/** Lists the rules that decide without asking (config rules and stored "Always" rules). */
export const approvalRulesOperation = defineOperation({
  name: 'approval_rules',
  summary: 'List approval rules (config auto-allow/deny and stored "Always" rules)',
  input: z.strictObject({}),
  needs: ['approvals'],
  expose: {
    tool: 'approval_rules',
    command: { name: 'approval_rules', positional: [], usage: '/approval_rules' },
    rpc: 'approvals.rules',
    cli: { name: 'approvals rules', args: [] },
  },
  async run(ctx): Promise<{ rules: ApprovalRule[] }> {
    return { rules: await ctx.services.approvals.rules() };
  },
  format(r) {
    if (r.rules.length === 0) return 'No approval rules.';
    return r.rules
      .map(
        (rule) =>
          `${rule.behavior === 'allow' ? '✅' : '⛔'} ${rule.id} ${rule.rule} — ${rule.root ?? 'every workspace'} (${rule.source})`,
      )
      .join('\n');
  },
});

/** Removes a stored "Always" rule. */
export const approvalRuleRemoveOperation = defineOperation({
  name: 'approval_rule_remove',
  summary: 'Remove a stored approval rule',
  input: z.strictObject({ id: z.string().trim().min(1, 'give the rule id (see approval rules)').max(64) }),
  needs: ['approvals'],
  offeredToAgent: agentMayDecide,
  expose: {
    tool: 'approval_rule_remove',
    command: { name: 'approval_rule_remove', positional: ['id'], usage: '/approval_rule_remove <id>' },
    rpc: 'approvals.removeRule',
    cli: { name: 'approvals rule-remove', args: ['<id>'] },
  },
  async run(ctx, args): Promise<{ removed: string }> {
    await ctx.services.approvals.removeRule(args.id);
    return { removed: args.id };
  },
  format(r) {
    return `🗑️ Rule ${r.removed} removed.`;
  },
});

// What an approval is: a coding agent's request to use a tool (or its question with choices), stored before anyone is
// asked, decided exactly once (a compare-and-swap on its status) by a person on any surface, a rule, or a timeout. The
// record itself is defined with its table (store/approvals.ts), so coding sessions can carry it without importing up.
import type { Approval } from '../store/approvals.ts';

export type { Approval, ApprovalQuestion, ApprovalRule } from '../store/approvals.ts';
export type { ApprovalKind, ApprovalScope, ApprovalStatus } from '../store/tables/approvals.ts';

/** A decision as the RPC method `approvals.decide` names it. */
export type ApprovalDecision = 'allow' | 'allow-session' | 'always' | 'deny';

/** Things the ApprovalDesk tells its listeners; each is committed before it is told. */
export type ApprovalEvent =
  /** A person is asked: the approval is pending. */
  | { type: 'requested'; approval: Approval }
  /**
   * It was decided (allowed, denied, expired or cancelled), by anyone. `asked` is false for a request a rule decided
   * before anyone was asked (no message was ever shown for it).
   */
  | { type: 'decided'; approval: Approval; asked: boolean };

/** A person's (or agent's) decision on an approval, as the operations pass it. */
export interface DecisionInput {
  id: string;
  decision: ApprovalDecision;
  /** Deny: the reason the agent receives. */
  message?: string;
  /** Question approvals: one answer per question, each an option label or its 1-based number. */
  answers?: string[];
  /** Who decides, as `Approval.decidedBy` names it. */
  by: string;
}

/** What deciding came to: `decided` for the one decision that won, `already` when it had been decided before. */
export type DecisionResult = { outcome: 'decided'; approval: Approval } | { outcome: 'already'; approval: Approval };

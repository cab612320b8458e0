// What an approval is: a coding agent's request to use a tool (or its question with choices), stored before anyone is
// asked, decided exactly once (a compare-and-swap on its status) by a person on any surface, a rule, or a timeout.

/** Where an approval is in its life. Only `pending` can change, and only once. */
export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'expired' | 'cancelled';

/** How far an allow reaches: this call, the rest of the session (same tool, same kind of input), or a stored rule. */
export type ApprovalScope = 'once' | 'session' | 'always';

/** A decision as the RPC method `approvals.decide` names it. */
export type ApprovalDecision = 'allow' | 'allow-session' | 'always' | 'deny';

/** What the agent asks: to use a tool, or to have its question with choices answered (Claude's AskUserQuestion). */
export type ApprovalKind = 'tool' | 'question';

/** One question of a `question` approval, with its choices in the order the agent gave them. */
export interface ApprovalQuestion {
  question: string;
  header?: string;
  options: string[];
  multiSelect: boolean;
}

/**
 * One approval request as every surface shows it. `decidedBy` names who decided: `telegram|<user>` (a chat user as
 * `channel|user`), `web`, `cli`, `rpc`, `agent:<session>`, `rule:<id>`, `timeout`, or `restart` (cancelled by a
 * daemon restart).
 */
export interface Approval {
  /** Short and typeable (`k3x9q`): what `/approve <id>` names. */
  id: string;
  /** The coding session's id and name. */
  sessionId: string;
  session: string;
  kind: ApprovalKind;
  tool: string;
  input: unknown;
  /** One line a person reads: `Bash: npm test`. */
  summary: string;
  /** The choices of a `question` approval (empty for a tool). */
  questions: ApprovalQuestion[];
  status: ApprovalStatus;
  /** Set once allowed. */
  scope: ApprovalScope | null;
  decidedBy: string | null;
  /** The reason given with a deny (or by a timeout / restart), or the answers of a question, as the agent got them. */
  message: string | null;
  createdAt: number;
  decidedAt: number | null;
}

/** A stored "Always" rule (or one from config): Claude Code permission-rule syntax, for a workspace root or global. */
export interface ApprovalRule {
  id: string;
  /** `Bash(npm test:*)`, `Read`, `WebFetch(domain:example.com)`. */
  rule: string;
  behavior: 'allow' | 'deny';
  /** The workspace root it holds for; null for every root. */
  root: string | null;
  /** `config` for rules from `approvals.autoAllow` / `autoDeny` (not removable), else who stored it. */
  source: string;
  createdAt: number;
}

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

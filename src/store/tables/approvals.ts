/** Where an approval is in its life. Only `pending` can change, and only once. */
export type ApprovalStatus = 'pending' | 'allowed' | 'denied' | 'expired' | 'cancelled';

/** How far an allow reaches: this call, the rest of the session (same tool, same kind of input), or a stored rule. */
export type ApprovalScope = 'once' | 'session' | 'always';

/** What the agent asks: to use a tool, or to have its question with choices answered (Claude's AskUserQuestion). */
export type ApprovalKind = 'tool' | 'question';

/** Approval tables (migrations 600–699): approval requests and the rules that decide them. */
export interface ApprovalTables {
  approvals: {
    id: string;
    session_id: string;
    session_name: string;
    /** The harness's id of the request, answered when decided. */
    request_id: string;
    kind: ApprovalKind;
    tool: string;
    /** JSON of the tool's input. */
    input: string;
    summary: string;
    /** JSON array of ApprovalQuestion (empty for a tool). */
    questions: string;
    /** The session's workspace root ("Always" rules are stored for it). */
    root: string | null;
    status: ApprovalStatus;
    scope: ApprovalScope | null;
    decided_by: string | null;
    message: string | null;
    created_at: number;
    decided_at: number | null;
    /** When an unanswered request is denied by the timeout. */
    expires_at: number;
  };
  approval_rules: {
    id: string;
    rule: string;
    behavior: 'allow' | 'deny';
    /** The workspace root it holds for; null: every root. */
    root: string | null;
    /** Set for an "Allow for session" rule: it holds only in that session. */
    session_id: string | null;
    source: string;
    created_at: number;
  };
}

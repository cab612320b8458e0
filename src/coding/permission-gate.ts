import type { Approval } from '../store/approvals.ts';
import type { PermissionDecision } from './harness.ts';

/** A tool call an agent run asks permission for, with the session it belongs to. */
export interface PermissionAsk {
  sessionId: string;
  sessionName: string;
  workdir: string;
  /** The harness's id of the request (what `Run.answerPermission` names). */
  requestId: string;
  tool: string;
  input: unknown;
}

/**
 * Where sessions send their permission requests (the ApprovalDesk): decided by a rule at once, or stored and decided
 * once by a person, a timeout or a restart. The SessionManager holds one; without it a pending request is answered by
 * the next message sent into the session ("yes" allows).
 */
export interface PermissionGate {
  /** Records the request (or decides it by a rule); `answer` is called once, when it is decided. */
  ask(request: PermissionAsk, answer: (decision: PermissionDecision, approval: Approval) => void): Promise<Approval>;
  /** Decides a pending approval from a message sent into its session ("yes" allows; a question's option answers). */
  answerText(id: string, text: string, by: string): Promise<unknown>;
  /** Cancels the pending approvals of a session that ended before anyone answered. */
  cancelSession(sessionId: string, message: string): Promise<void>;
}

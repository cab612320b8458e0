// A coding session's permission requests: the one request the agent is waiting on, its way through the permission
// gate (decided by a rule at once, or stored for a person), and how a message or a decision answers it. The session
// records and signals; this holds the pending request and talks to the gate.
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Approval } from '../store/approvals.ts';
import type { PermissionDecision } from './harness.ts';
import type { PermissionAsk, PermissionGate } from './permission-gate.ts';
import type { SessionLogEntry } from './session-log.ts';

/** A tool call the agent asked permission for, still unanswered. */
export interface PendingPermission {
  requestId: string;
  tool: string;
  input: unknown;
  /** The approval a person is asked to decide, once the gate stored it (absent without a gate, or while a rule looks). */
  approval?: Approval;
}

/** What the pending request needs from its session: the gate, and callbacks for what the gate says. */
export interface SessionPermissionsDeps {
  /** Where requests go (approvals); without it the next message sent into the session answers them. */
  gate?: PermissionGate;
  logger: Logger;
  /** Whether the session is still active (a request stored after it ended is not waited on). */
  isActive: () => boolean;
  /** The gate stored the pending request for a person to decide: the session now waits for `permission`. */
  onStored: () => void;
  /** The gate decided request `requestId` (`decidedBy` 'error' when it could not be recorded: then it is denied). */
  onDecided: (requestId: string, decision: PermissionDecision, decidedBy: string) => void;
}

/** The permission request a session's agent is waiting on (at most one), and its way through the gate. */
export class SessionPermissions {
  readonly #deps: SessionPermissionsDeps;
  #pending: PendingPermission | null = null;

  constructor(deps: SessionPermissionsDeps) {
    this.#deps = deps;
  }

  /** The request waiting for an answer, if any. */
  get pending(): Readonly<PendingPermission> | null {
    return this.#pending;
  }

  /** True when requests go to a gate (a message sent into the session does not answer them itself). */
  get gated(): boolean {
    return this.#deps.gate !== undefined;
  }

  /** Notes the agent's request as the pending one (it replaces any other). */
  open(requestId: string, tool: string, input: unknown): void {
    this.#pending = { requestId, tool, input };
  }

  /**
   * Hands `request` (the pending one) to the gate: a decision goes to `onDecided`; once the gate stored it as pending,
   * while it is still the pending request and the session active, it gets its approval and `onStored` is called. A
   * failure to record it (or in `onStored`) is logged and denies the request. Does nothing without a gate.
   */
  ask(request: PermissionAsk): void {
    const gate = this.#deps.gate;
    if (!gate) return;
    const { requestId } = request;
    gate
      .ask(request, (decision, approval) => this.#deps.onDecided(requestId, decision, approval.decidedBy ?? 'unknown'))
      .then((approval) => {
        const pending = this.#pending;
        if (approval.status !== 'pending' || pending?.requestId !== requestId || !this.#deps.isActive()) return;
        pending.approval = approval;
        this.#deps.onStored();
      })
      .catch((error: unknown) => {
        this.#deps.logger.error(
          { session: request.sessionId, err: errorMessage(error) },
          'recording an approval request failed',
        );
        this.#deps.onDecided(
          requestId,
          { allow: false, message: 'The approval request could not be recorded.' },
          'error',
        );
      });
  }

  /**
   * Takes the pending request when it is `requestId` (any pending request when omitted): it is no longer pending, and
   * is returned. Returns null, changing nothing, when no such request is pending.
   */
  take(requestId?: string): PendingPermission | null {
    const pending = this.#pending;
    if (!pending || (requestId !== undefined && pending.requestId !== requestId)) return null;
    this.#pending = null;
    return pending;
  }

  /** Forgets the pending request (the session ended). */
  clear(): void {
    this.#pending = null;
  }
}

/** A message's answer to a permission request: "yes", "allow", "ok"… allows; anything else denies, the text the reason. */
export function decisionOfText(text: string): PermissionDecision {
  return /^\s*(y|yes|allow|approve|ok|okay)\b/i.test(text) ? { allow: true } : { allow: false, message: text };
}

/** The `permissionAnswer` log record of `decision` on request `requestId`, with who decided when a gate did. */
export function permissionAnswerEntry(
  requestId: string,
  decision: PermissionDecision,
  decidedBy?: string,
): SessionLogEntry {
  return {
    type: 'permissionAnswer',
    requestId,
    allow: decision.allow,
    ...(decision.allow ? {} : { message: decision.message }),
    ...(decidedBy !== undefined ? { decidedBy } : {}),
  };
}

// Chat messages of approvals: a request is sent, with its buttons, to the session's origin chat and the chats
// streaming it; once decided (by anyone, anywhere, or by the timeout or a restart) each of those messages is edited in
// place to say how and by whom, its buttons gone. Both go through the durable outbox under keys, so a crash repeats
// neither; a channel that cannot edit gets the outcome as a new message.
import type { Approval, ApprovalEvent } from '../approvals/approval.ts';
import { decidedText, requestButtons, requestText } from '../approvals/approval-text.ts';
import type { ChannelTarget, Outbox } from '../channels/connector.ts';
import { formatTarget } from '../channels/connector.ts';
import type { SessionManager } from '../coding/session-manager.ts';
import type { Logger } from '../core/logger.ts';
import { recipients } from './recipients.ts';
import { sessionThreadKey } from './session-thread.ts';

export interface ApprovalNoticesDeps {
  /** Where approval events come from (the ApprovalDesk). */
  approvals: { on(listener: (event: ApprovalEvent) => void): () => void };
  sessions: Pick<SessionManager, 'get' | 'recordApproval'>;
  outbox: Outbox;
  logger: Logger;
}

/** The outbox key of an approval's request message in one chat (its decision edits the message under this key). */
export function requestKey(approvalId: string, target: ChannelTarget): string {
  return `approval-${approvalId}-${formatTarget(target)}`;
}

/** Tells chats about approval requests and their outcomes; also writes each to its session's log. */
export class ApprovalNotices {
  readonly #deps: ApprovalNoticesDeps;
  #unsubscribe: (() => void) | null = null;
  /** Notices are recorded one after another, so a request's message is always queued before its outcome. */
  #queue: Promise<void> = Promise.resolve();

  constructor(deps: ApprovalNoticesDeps) {
    this.#deps = deps;
  }

  /** Subscribes to the desk. Idempotent. */
  start(): void {
    this.#unsubscribe ??= this.#deps.approvals.on((event) => this.#onEvent(event));
  }

  /** Unsubscribes; resolves once every notice already started is recorded. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    await this.#queue;
  }

  /** Resolves once every notice started so far is recorded in the outbox (for tests and orderly shutdown). */
  idle(): Promise<void> {
    return this.#queue;
  }

  #onEvent(event: ApprovalEvent): void {
    const approval = event.approval;
    try {
      this.#deps.sessions.recordApproval(approval);
    } catch (error) {
      this.#deps.logger.error({ err: error, approval: approval.id }, 'could not log an approval in its session');
    }
    if (event.type === 'decided' && !event.asked) return;
    this.#queue = this.#queue
      .then(() => (event.type === 'requested' ? this.#request(approval) : this.#decided(approval)))
      .catch((error: unknown) =>
        this.#deps.logger.error({ err: error, approval: approval.id }, 'could not queue an approval notice'),
      );
  }

  async #targets(approval: Approval): Promise<ChannelTarget[]> {
    const record = await this.#deps.sessions.get(approval.sessionId);
    return recipients(record, { foreground: true, origin: true }).map((r) => r.target);
  }

  async #request(approval: Approval): Promise<void> {
    const text = requestText(approval);
    const buttons = requestButtons(approval);
    for (const target of await this.#targets(approval)) {
      await this.#deps.outbox.send(
        target,
        { text, threadOf: sessionThreadKey(approval.sessionId, target), ...(buttons.length > 0 ? { buttons } : {}) },
        { key: requestKey(approval.id, target) },
      );
    }
  }

  async #decided(approval: Approval): Promise<void> {
    const text = decidedText(approval);
    for (const target of await this.#targets(approval)) {
      const replaces = requestKey(approval.id, target);
      await this.#deps.outbox.send(
        target,
        { text, replaces, threadOf: sessionThreadKey(approval.sessionId, target) },
        { key: `${replaces}-decided` },
      );
    }
  }
}

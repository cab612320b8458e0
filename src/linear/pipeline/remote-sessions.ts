// Events for a dispatch whose worker runs on another node of the cluster: the webhook intake takes a follow-up prompt or
// an approval reply, and the agent process waits on the node that runs it. They are forwarded there as the operations
// a person would run (`respond`, `approval_decide`) through the cluster's durable command queue, and applied there once.
import type { DecisionInput, DecisionResult } from '../../approvals/approval.ts';
import type { SessionManager } from '../../coding/session-manager.ts';
import { isActiveStatus } from '../../store/coding-session-types.ts';

/** Runs an operation on another node (ClusterSessions.forward, wired in main.ts): its answer, or its error thrown. */
export interface OperationForwarder {
  /** This node's name. */
  readonly node: string;
  forward(node: string, operation: string, args: Record<string, unknown>, caller: unknown): Promise<unknown>;
}

/** The caller a forwarded reply of a Linear user runs as: `linear|<name>` decides (deciderOf), like the local path. */
function linearUser(by: string): unknown {
  return { kind: 'chat', channel: 'linear', userId: by.startsWith('linear|') ? by.slice('linear|'.length) : by };
}

/** Sessions of the pipeline's dispatches that run on other nodes, and what can be sent to them. */
export class RemoteSessions {
  readonly #sessions: Pick<SessionManager, 'get' | 'liveById'>;
  readonly #forwarder: OperationForwarder;

  constructor(sessions: Pick<SessionManager, 'get' | 'liveById'>, forwarder: OperationForwarder) {
    this.#sessions = sessions;
    this.#forwarder = forwarder;
  }

  /** The node running session `id` when it is active on another node; null when it is this node's, ended or unknown. */
  async nodeOf(id: string): Promise<string | null> {
    if (this.#sessions.liveById(id)) return null;
    const record = await this.#sessions.get(id).catch(() => null);
    if (!record?.node || record.node === this.#forwarder.node || !isActiveStatus(record.status)) return null;
    return record.node;
  }

  /** Passes a user's follow-up to the worker on `node` (its current turn interrupted), like `respond --interrupt`. */
  async prompt(node: string, sessionId: string, text: string): Promise<void> {
    await this.#forwarder.forward(
      node,
      'respond',
      { session: sessionId, message: text, interrupt: true },
      { kind: 'rpc' },
    );
  }

  /** Decides an approval of a session on `node` (`approval_decide`), as the Linear user `input.by`. */
  async decide(node: string, input: DecisionInput): Promise<DecisionResult> {
    const { id, decision, message, answers, by } = input;
    const args = { id, decision, ...(message ? { message } : {}), ...(answers ? { answers } : {}) };
    return (await this.#forwarder.forward(node, 'approval_decide', args, linearUser(by))) as DecisionResult;
  }

  /** Answers the pending approval of a session on `node` with a reply's text (the session's node decides it). */
  async answerText(node: string, sessionId: string, text: string, by: string): Promise<void> {
    await this.#forwarder.forward(node, 'respond', { session: sessionId, message: text }, linearUser(by));
  }
}

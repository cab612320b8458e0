// Approvals of Linear-dispatched workers, in their Linear agent session: a worker's pending request is posted there as
// an elicitation with its choices, its outcome (decided there or on any other surface) as a thought, and a person's
// reply there decides it instead of reaching the worker as a new prompt. Every post is a keyed effect (sent once across
// crashes); a reply is tied to its approval by a durable claim before it decides it, so a redelivery never decides a
// second time (nor a later request).
import type { Approval, ApprovalEvent, DecisionResult } from '../approvals/approval.ts';
import type { ApprovalDesk } from '../approvals/desk.ts';
import type { Clock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import { KeyedSerial } from '../core/keyed-serial.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearClaimStore } from '../store/linear-claims.ts';
import type { DispatchRecord } from '../store/linear-dispatch-types.ts';
import { FINISHED_DISPATCH_STATUSES } from '../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../store/linear-dispatches.ts';
import { approvalElicitation, approvalOutcome, parseApprovalReply } from './approval-replies.ts';
import type { DispatchReporter } from './pipeline/dispatch-reporter.ts';
import { InFlight } from './pipeline/in-flight.ts';
import type { RemoteSessions } from './pipeline/remote-sessions.ts';

/** What the bridge needs of the ApprovalDesk. */
export type LinearApprovalDesk = Pick<ApprovalDesk, 'on' | 'pendingFor' | 'decide' | 'answerText'>;

/** The owner of a prompt's claim (`prompt:<activity>`) when the prompt answered an approval: `approval:<id>`. */
const CLAIM_PREFIX = 'approval:';

export interface LinearApprovalsDeps {
  desk: LinearApprovalDesk;
  store: Pick<DispatchStore, 'session' | 'get' | 'latestForAgentSession' | 'currentSession'>;
  reporter: Pick<DispatchReporter, 'tellOnce'>;
  claims: Pick<LinearClaimStore, 'claim' | 'owner'>;
  clock: Clock;
  logger: Logger;
  /** In a cluster: the workers running on other nodes, whose approvals are decided there. */
  remote?: Pick<RemoteSessions, 'nodeOf' | 'decide' | 'answerText'> | null;
}

/** A person's reply in an agent session, as the router hands it over. */
export interface AgentSessionReply {
  agentSessionId: string;
  /** The prompt's key (`prompt:<activity id>`): the same for every delivery of it. */
  key: string;
  text: string;
  /** Who replied, as `decidedBy` names it (`linear|<name>`). */
  by: string;
}

/**
 * The approvals of the pipeline's workers in Linear. It listens to the desk from construction (so the cancels of a
 * restart, told before the pipeline starts, reach Linear too) until `stop()`.
 */
export class LinearApprovals {
  #deps: LinearApprovalsDeps;
  #unsubscribe: (() => void) | null;
  #inFlight = new InFlight();
  /** The posts of each approval, one after another (a request before its outcome). */
  readonly #posts = new KeyedSerial<string>();

  constructor(deps: LinearApprovalsDeps) {
    this.#deps = deps;
    this.#unsubscribe = deps.desk.on((event) => this.#onEvent(event));
  }

  /**
   * A worker session was mapped to its dispatch: a request it made before (a race with the mapping) is posted now.
   * Returns at once; the post is covered by `idle()`.
   */
  workerStarted(sessionId: string): void {
    this.#inFlight.run(
      async () => {
        const pending = await this.#deps.desk.pendingFor(sessionId);
        if (pending) await this.#posts.run(pending.id, () => this.#postRequest(pending));
      },
      (error) => this.#failed(error, sessionId),
    );
  }

  /**
   * A reply in an agent session whose worker has a pending approval decides it; resolves true when the reply was (or,
   * on a redelivery, had been) an answer to an approval, false when it is an ordinary prompt. The reply is tied to the
   * approval (a durable claim on its key) before deciding, so a delivery run again decides nothing new: the desk's
   * compare-and-swap answers `already`, and a request made since is left alone.
   */
  async reply(reply: AgentSessionReply): Promise<boolean> {
    const { claims, clock, logger } = this.#deps;
    const owner = await claims.owner(reply.key);
    if (owner !== null && !owner.startsWith(CLAIM_PREFIX)) return false;
    const pending = await this.#pendingOf(reply.agentSessionId);
    const claimed = owner?.slice(CLAIM_PREFIX.length);
    if (claimed === undefined) {
      if (!pending) return false;
      if (!(await claims.claim(reply.key, `${CLAIM_PREFIX}${pending.id}`, clock.now()))) return false;
      // Crash tests: the reply is tied to its approval, not yet decided (the redelivery decides it, once).
      faultPoint('linear.approvals.after-claim');
    } else if (pending?.id !== claimed) {
      logger.info({ approval: claimed, prompt: reply.key }, 'linear approval reply already applied (redelivery)');
      return true;
    }
    const approval = pending;
    const result = await this.#decide(approval, reply);
    if (result?.outcome === 'already' && result.approval.decidedBy !== reply.by) {
      const d = await this.#dispatchOf(approval.sessionId);
      const body = `Approval ${approval.id} was already decided: ${approvalOutcome(result.approval)}`;
      if (d) await this.#deps.reporter.tellOnce(d, { type: 'thought', body }, `${reply.key}/approval`);
    }
    return true;
  }

  /** True while a post has not been made (or failed). */
  get busy(): boolean {
    return this.#inFlight.busy;
  }

  /** Resolves once every post started so far has been made (or has failed and been logged). */
  idle(): Promise<void> {
    return this.#inFlight.settled();
  }

  /** Stops listening to the desk and waits for the posts in flight. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    await this.idle();
  }

  #onEvent(event: ApprovalEvent): void {
    const { approval } = event;
    switch (event.type) {
      case 'requested':
        this.#inFlight.run(
          () => this.#posts.run(approval.id, () => this.#postRequest(approval)),
          (error) => this.#failed(error, approval.sessionId),
        );
        return;
      case 'decided':
        if (!event.asked) return;
        this.#inFlight.run(
          () => this.#posts.run(approval.id, () => this.#postOutcome(approval)),
          (error) => this.#failed(error, approval.sessionId),
        );
        return;
      default:
        event satisfies never;
    }
  }

  /**
   * Decides `approval` with the reply: here, or on the node that runs its worker (cluster), where the agent waits for
   * it. Resolves with the desk's result; null when a text went to another node (decided there, as `answerText` would).
   */
  async #decide(approval: Approval, reply: AgentSessionReply): Promise<DecisionResult | null> {
    const { desk, remote } = this.#deps;
    const node = remote ? await remote.nodeOf(approval.sessionId) : null;
    const parsed = parseApprovalReply(approval, reply.text);
    switch (parsed.kind) {
      case 'decide': {
        const { kind: _kind, ...decision } = parsed;
        const input = { id: approval.id, ...decision, by: reply.by };
        return node && remote ? remote.decide(node, input) : desk.decide(input);
      }
      case 'text':
        if (node && remote) {
          await remote.answerText(node, approval.sessionId, reply.text, reply.by);
          return null;
        }
        return desk.answerText(approval.id, reply.text, reply.by);
      default:
        parsed satisfies never;
        throw new Error('unreachable');
    }
  }

  async #postRequest(approval: Approval): Promise<void> {
    const d = await this.#dispatchOf(approval.sessionId);
    if (!d) return;
    const body = approvalElicitation(approval);
    await this.#deps.reporter.tellOnce(d, { type: 'elicitation', body }, `approval:${approval.id}/request`);
  }

  async #postOutcome(approval: Approval): Promise<void> {
    const d = await this.#dispatchOf(approval.sessionId);
    // A dispatch that ended (stopped, done, stuck) has said its last word: a thought after it would be noise.
    if (!d || FINISHED_DISPATCH_STATUSES.includes(d.status)) return;
    const body = approvalOutcome(approval);
    await this.#deps.reporter.tellOnce(d, { type: 'thought', body }, `approval:${approval.id}/outcome`);
  }

  /** The dispatch whose worker the coding session is, or null (not the pipeline's, or its auditor). */
  async #dispatchOf(sessionId: string): Promise<DispatchRecord | null> {
    const { store } = this.#deps;
    const row = await store.session(sessionId);
    if (row?.phase !== 'worker') return null;
    return store.get(row.dispatchId);
  }

  /** The pending approval of the current worker of the agent session's dispatch, if any. */
  async #pendingOf(agentSessionId: string): Promise<Approval | undefined> {
    const { store, desk } = this.#deps;
    const d = await store.latestForAgentSession(agentSessionId);
    if (!d) return undefined;
    const row = await store.currentSession(d.id);
    if (row?.phase !== 'worker') return undefined;
    return desk.pendingFor(row.sessionId);
  }

  #failed(error: unknown, sessionId: string): void {
    this.#deps.logger.error(
      { err: errorMessage(error), session: sessionId },
      'could not tell Linear about a worker approval',
    );
  }
}

// The ApprovalDesk: every tool call an agent asks to make goes through it. A rule decides it at once, or it is stored as
// a pending approval (committed before anyone is shown it) and decided exactly once — by a person on any surface, the
// timeout, or a restart — through a compare-and-swap on its status; only the winner answers the agent.
import type { Kysely } from 'kysely';
import type { PermissionDecision } from '../coding/harness.ts';
import type { PermissionAsk, PermissionGate } from '../coding/permission-gate.ts';
import type { Clock, Timer } from '../core/clock.ts';
import type { ApprovalsConfig } from '../core/config-approvals.ts';
import { AppError, invalidInput, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { DecisionPatch, StoredApproval, StoredRule } from '../store/approvals.ts';
import { ApprovalStore } from '../store/approvals.ts';
import type { Database } from '../store/tables/index.ts';
import type {
  Approval,
  ApprovalEvent,
  ApprovalRule,
  ApprovalStatus,
  DecisionInput,
  DecisionResult,
} from './approval.ts';
import type { ActiveRule } from './approval-rules.ts';
import { activeRules, configRules, decidingRule } from './approval-rules.ts';
import { answeredInput, answersText, questionsOf, resolveAnswers } from './questions.ts';
import { describeCall, formatRule, sessionRuleFor } from './rule-syntax.ts';

export interface ApprovalDeskDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  config: ApprovalsConfig;
  /** The workspace root a working directory belongs to ("Always" rules are stored for it). */
  rootOf: (workdir: string) => string;
}

/** How a pending approval's answer reaches its agent run. */
type Answer = (decision: PermissionDecision, approval: Approval) => void;

/** A message that allows a pending tool call when sent into its session ("yes", "allow", …). */
const ALLOWS = /^\s*(y|yes|allow|approve|ok|okay)\b/i;

/** What the desk says to a denied agent when nobody gave a reason. */
const DENIED = 'The user denied this tool call.';

/** Strips the desk's own fields from a stored approval: what every surface shows. */
export function publicApproval(stored: StoredApproval): Approval {
  const { requestId: _request, root: _root, expiresAt: _expires, ...approval } = stored;
  return approval;
}

/** The approvals of every session: rules, pending requests, decisions, timeouts and restart cancels. */
export class ApprovalDesk implements PermissionGate {
  readonly #deps: ApprovalDeskDeps;
  readonly #store: ApprovalStore;
  readonly #configRules: ActiveRule[];
  readonly #answers = new Map<string, Answer>();
  readonly #timers = new Map<string, Timer>();
  readonly #listeners = new Set<(event: ApprovalEvent) => void>();

  constructor(deps: ApprovalDeskDeps) {
    this.#deps = deps;
    this.#store = new ApprovalStore(deps.db);
    this.#configRules = configRules(deps.config);
  }

  /** Subscribes to requests and decisions (each told after it committed); returns the unsubscribe function. */
  on(listener: (event: ApprovalEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * A tool call asks for approval: a rule decides it (answered at once, recorded as decided by `rule:<id>`), or it is
   * stored as pending, its timeout armed, and listeners told; `answer` is called once, when it is decided. Resolves with
   * the approval as stored.
   */
  async ask(request: PermissionAsk, answer: Answer): Promise<Approval> {
    const { clock, config } = this.#deps;
    const now = clock.now();
    const questions = questionsOf(request.tool, request.input);
    const root = this.#deps.rootOf(request.workdir);
    const base: StoredApproval = {
      id: newId(5),
      sessionId: request.sessionId,
      session: request.sessionName,
      kind: questions ? 'question' : 'tool',
      tool: request.tool,
      input: request.input,
      summary: questions ? (questions[0]?.question ?? request.tool) : describeCall(request),
      questions: questions ?? [],
      status: 'pending',
      scope: null,
      decidedBy: null,
      message: null,
      createdAt: now,
      decidedAt: null,
      requestId: request.requestId,
      root,
      expiresAt: now + config.timeoutMinutes * 60_000,
    };
    const rule = questions ? undefined : await this.#ruleFor(request);
    if (rule) {
      const allow = rule.behavior === 'allow';
      const decided: StoredApproval = {
        ...base,
        status: allow ? 'allowed' : 'denied',
        scope: allow ? 'once' : null,
        decidedBy: `rule:${rule.id}`,
        message: allow ? null : `Denied by the rule ${rule.rule}.`,
        decidedAt: now,
      };
      await this.#store.insert(decided);
      const approval = publicApproval(decided);
      answer(allow ? { allow: true } : { allow: false, message: decided.message ?? DENIED }, approval);
      this.#emit({ type: 'decided', approval, asked: false });
      return approval;
    }
    await this.#store.insert(base);
    this.#answers.set(base.id, answer);
    this.#timers.set(
      base.id,
      clock.after(config.timeoutMinutes * 60_000, () => void this.#expire(base.id)),
    );
    const approval = publicApproval(base);
    this.#emit({ type: 'requested', approval });
    return approval;
  }

  /**
   * Decides a pending approval. Exactly one decision wins across surfaces and processes (a compare-and-swap on the
   * status); the winner answers the agent, stores the session or "Always" rule with the decision, and tells listeners.
   * A later decision gets `already` with the approval as it was decided. Throws not_found for an unknown id,
   * invalid_input for a decision that does not fit (a question needs answers; a tool takes none), and forbidden for an
   * agent (`agent:<session>`) unless `approvals.agentMayDecide` is true.
   */
  async decide(input: DecisionInput): Promise<DecisionResult> {
    if (input.by.startsWith('agent:') && !this.#deps.config.agentMayDecide) {
      throw new AppError(
        'forbidden',
        'an agent may not decide approvals (approvals.agentMayDecide is false): ask the user to decide it',
      );
    }
    const stored = await this.#store.get(input.id);
    if (!stored) throw notFound(`approval ${input.id}: no such approval (see the approvals list)`);
    if (stored.status !== 'pending') return { outcome: 'already', approval: publicApproval(stored) };
    const now = this.#deps.clock.now();
    const { patch, decision, rule } = this.#decision(stored, input, now);
    return this.#settle(stored, patch, decision, rule);
  }

  /**
   * A message sent into a session whose approval is pending decides it: for a tool, "yes"/"allow"/"ok" allows once and
   * anything else denies with the text as the reason; for a question, a text naming an option answers it, anything else
   * denies the question with the text (the agent reads it as the person's reply).
   */
  async answerText(id: string, text: string, by: string): Promise<DecisionResult> {
    const stored = await this.#store.get(id);
    if (stored?.kind === 'question' && stored.questions.length === 1) {
      try {
        resolveAnswers(stored.questions, [text]);
        return await this.decide({ id, decision: 'allow', answers: [text], by });
      } catch (error) {
        if (!(error instanceof AppError) || error.kind !== 'invalid_input') throw error;
      }
      return this.decide({ id, decision: 'deny', message: `The user replied in chat instead: ${text}`, by });
    }
    const allow = ALLOWS.test(text);
    return this.decide({ id, decision: allow ? 'allow' : 'deny', ...(allow ? {} : { message: text }), by });
  }

  /** Cancels the pending approvals of a session that ended (`by` says why: `session-ended`). */
  async cancelSession(sessionId: string, message: string): Promise<void> {
    for (const stored of await this.#store.list({ sessionId, status: 'pending', limit: 100 })) {
      await this.#settle(stored, this.#closing('cancelled', 'session-ended', message), { allow: false, message });
    }
  }

  /**
   * At start-up: approvals left pending by the previous daemon are cancelled ("the daemon restarted"; their agents
   * are gone) and listeners told, so their chat messages say so. Resolves with how many there were.
   */
  async cancelStale(): Promise<number> {
    const stale = await this.#store.pending();
    for (const stored of stale) {
      const message = 'the daemon restarted; resume the session to be asked again';
      await this.#settle(stored, this.#closing('cancelled', 'restart', message), { allow: false, message });
    }
    if (stale.length > 0)
      this.#deps.logger.info({ cancelled: stale.length }, 'pending approvals cancelled by the restart');
    return stale.length;
  }

  /** Approvals, newest first (at most `limit`, default 50), optionally of one session and/or status. */
  async list(filter: { sessionId?: string; status?: ApprovalStatus; limit?: number } = {}): Promise<Approval[]> {
    const rows = await this.#store.list({ ...filter, limit: filter.limit ?? 50 });
    return rows.map(publicApproval);
  }

  /** The pending approval of a session, if any (the newest). */
  async pendingFor(sessionId: string): Promise<Approval | undefined> {
    const [row] = await this.#store.list({ sessionId, status: 'pending', limit: 1 });
    return row ? publicApproval(row) : undefined;
  }

  /** The rules that decide without asking: config rules first, then the stored "Always" rules. */
  async rules(): Promise<ApprovalRule[]> {
    const stored = await this.#store.standingRules();
    return [...this.#configRules.map((r) => r.rule), ...stored].map(({ sessionId: _s, ...rule }) => rule);
  }

  /** Removes a stored rule; throws not_found for an unknown id and invalid_input for a config rule. */
  async removeRule(id: string): Promise<void> {
    if (id.startsWith('config:')) throw invalidInput(`id: ${id} comes from the config file; remove it there`, 'id');
    if (!(await this.#store.removeRule(id))) throw notFound(`rule ${id}: no such rule (see approvals rules)`);
  }

  /** Stops the timeout timers (the approvals stay pending in the store; the next start cancels them). */
  stop(): void {
    for (const timer of this.#timers.values()) timer.cancel();
    this.#timers.clear();
  }

  async #ruleFor(request: PermissionAsk): Promise<StoredRule | undefined> {
    const stored = activeRules(await this.#store.rulesFor(request.sessionId));
    return decidingRule([...this.#configRules, ...stored], { ...request });
  }

  #decision(
    stored: StoredApproval,
    input: DecisionInput,
    now: number,
  ): { patch: DecisionPatch; decision: PermissionDecision; rule?: StoredRule } {
    if (input.decision === 'deny') {
      const message = input.message?.trim() || DENIED;
      return {
        patch: { status: 'denied', scope: null, decidedBy: input.by, message, decidedAt: now },
        decision: { allow: false, message },
      };
    }
    if (stored.kind === 'question') {
      if (input.decision !== 'allow')
        throw invalidInput('decision: a question is answered with allow and its answers, or denied', 'decision');
      const answers = resolveAnswers(stored.questions, input.answers ?? []);
      return {
        patch: { status: 'allowed', scope: 'once', decidedBy: input.by, message: answersText(answers), decidedAt: now },
        decision: { allow: true, updatedInput: answeredInput(stored.input, answers) },
      };
    }
    if (input.answers && input.answers.length > 0)
      throw invalidInput('answers: only a question takes answers; this approval is a tool call', 'answers');
    const scope = input.decision === 'allow' ? 'once' : input.decision === 'allow-session' ? 'session' : 'always';
    const patch: DecisionPatch = { status: 'allowed', scope, decidedBy: input.by, message: null, decidedAt: now };
    if (scope === 'once') return { patch, decision: { allow: true } };
    const rule: StoredRule = {
      id: newId(6),
      rule: formatRule(sessionRuleFor(stored)),
      behavior: 'allow',
      root: scope === 'always' ? stored.root : null,
      sessionId: scope === 'session' ? stored.sessionId : null,
      source: input.by,
      createdAt: now,
    };
    return { patch, decision: { allow: true }, rule };
  }

  #closing(status: 'expired' | 'cancelled', by: string, message: string): DecisionPatch {
    return { status, scope: null, decidedBy: by, message, decidedAt: this.#deps.clock.now() };
  }

  async #expire(id: string): Promise<void> {
    const stored = await this.#store.get(id);
    if (!stored || stored.status !== 'pending') return;
    const minutes = this.#deps.config.timeoutMinutes;
    const message = `No answer within ${minutes} minute${minutes === 1 ? '' : 's'}; the tool call was denied.`;
    try {
      await this.#settle(stored, this.#closing('expired', 'timeout', message), { allow: false, message });
    } catch (error) {
      this.#deps.logger.error({ err: error, approval: id }, 'expiring an approval failed');
    }
  }

  async #settle(
    stored: StoredApproval,
    patch: DecisionPatch,
    decision: PermissionDecision,
    rule?: StoredRule,
  ): Promise<DecisionResult> {
    const won = await this.#store.decide(stored.id, patch, rule);
    if (!won) {
      const now = await this.#store.get(stored.id);
      return { outcome: 'already', approval: publicApproval(now ?? stored) };
    }
    this.#timers.get(stored.id)?.cancel();
    this.#timers.delete(stored.id);
    const approval = publicApproval({ ...stored, ...patch });
    const answer = this.#answers.get(stored.id);
    this.#answers.delete(stored.id);
    answer?.(decision, approval);
    this.#emit({ type: 'decided', approval, asked: true });
    return { outcome: 'decided', approval };
  }

  #emit(event: ApprovalEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#deps.logger.error({ err: error, event: event.type }, 'approval listener failed');
      }
    }
  }
}

import type { Kysely, Selectable } from 'kysely';
import { HotStatements } from './hot-statements.ts';
import type { ApprovalKind, ApprovalScope, ApprovalStatus } from './tables/approvals.ts';
import type { Database } from './tables/index.ts';

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

type ApprovalRow = Selectable<Database['approvals']>;
type RuleRow = Selectable<Database['approval_rules']>;

/** What the desk knows of a request besides the Approval record: the harness's id of it, its root and expiry. */
export interface StoredApproval extends Approval {
  requestId: string;
  root: string | null;
  expiresAt: number;
}

/** A stored rule, with the session it is limited to ("Allow for session"), if any. */
export interface StoredRule extends ApprovalRule {
  sessionId: string | null;
}

/** A decision to apply to a pending approval. */
export interface DecisionPatch {
  status: Exclude<ApprovalStatus, 'pending'>;
  scope: ApprovalScope | null;
  decidedBy: string;
  message: string | null;
  decidedAt: number;
}

function toApproval(row: ApprovalRow): StoredApproval {
  return {
    id: row.id,
    sessionId: row.session_id,
    session: row.session_name,
    kind: row.kind,
    tool: row.tool,
    input: JSON.parse(row.input) as unknown,
    summary: row.summary,
    questions: JSON.parse(row.questions) as ApprovalQuestion[],
    status: row.status,
    scope: row.scope,
    decidedBy: row.decided_by,
    message: row.message,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
    requestId: row.request_id,
    root: row.root,
    expiresAt: row.expires_at,
  };
}

function toRule(row: RuleRow): StoredRule {
  return {
    id: row.id,
    rule: row.rule,
    behavior: row.behavior,
    root: row.root,
    source: row.source,
    createdAt: row.created_at,
    sessionId: row.session_id,
  };
}

/**
 * Persistence of approvals and approval rules (SQLite or PostgreSQL). An approval changes from `pending` exactly once:
 * `decide` is a compare-and-swap on the status. Every method resolves once its statement committed.
 */
export class ApprovalStore {
  readonly #db: Kysely<Database>;
  /** The statements run per session (its approvals listed at its end), built once per shape. */
  readonly #hot = new HotStatements();

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Records a new approval (pending, or already decided by a rule). */
  async insert(approval: StoredApproval): Promise<void> {
    await this.#db
      .insertInto('approvals')
      .values({
        id: approval.id,
        session_id: approval.sessionId,
        session_name: approval.session,
        request_id: approval.requestId,
        kind: approval.kind,
        tool: approval.tool,
        input: JSON.stringify(approval.input ?? null),
        summary: approval.summary,
        questions: JSON.stringify(approval.questions),
        root: approval.root,
        status: approval.status,
        scope: approval.scope,
        decided_by: approval.decidedBy,
        message: approval.message,
        created_at: approval.createdAt,
        decided_at: approval.decidedAt,
        expires_at: approval.expiresAt,
      })
      .execute();
  }

  /** The approval with this id, or undefined. */
  async get(id: string): Promise<StoredApproval | undefined> {
    const row = await this.#db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toApproval(row) : undefined;
  }

  /**
   * Decides a pending approval, storing `rule` with it in one transaction: true when this call changed it from
   * `pending` (the one decision that wins; the rule is stored only then), false when it was no longer pending.
   */
  async decide(id: string, patch: DecisionPatch, rule?: StoredRule): Promise<boolean> {
    if (!rule) return this.#decide(this.#db, id, patch);
    return this.#db.transaction().execute(async (trx) => {
      const won = await this.#decide(trx, id, patch);
      if (won) await insertRule(trx, rule);
      return won;
    });
  }

  async #decide(db: Kysely<Database>, id: string, patch: DecisionPatch): Promise<boolean> {
    const result = await db
      .updateTable('approvals')
      .set({
        status: patch.status,
        scope: patch.scope,
        decided_by: patch.decidedBy,
        message: patch.message,
        decided_at: patch.decidedAt,
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Approvals, newest first, optionally of one session and/or status; at most `limit`. */
  async list(filter: { sessionId?: string; status?: ApprovalStatus; limit: number }): Promise<StoredApproval[]> {
    const { sessionId, status, limit } = filter;
    // One statement per combination of filters, built once (see HotStatements): a session's end lists its pending ones.
    const values: unknown[] = [
      ...(sessionId !== undefined ? [sessionId] : []),
      ...(status !== undefined ? [status] : []),
    ];
    const shape = `list${sessionId !== undefined ? ' session' : ''}${status !== undefined ? ' status' : ''}`;
    const rows = await this.#hot.rows(this.#db, shape, [...values, limit], (slot) => {
      let query = this.#db.selectFrom('approvals').selectAll();
      let next = 0;
      if (sessionId !== undefined) query = query.where('session_id', '=', slot<string>(next++));
      if (status !== undefined) query = query.where('status', '=', slot<ApprovalStatus>(next++));
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(slot<number>(next));
    });
    return rows.map(toApproval);
  }

  /** Every pending approval, oldest first (at start-up: those a restart cut off). */
  async pending(): Promise<StoredApproval[]> {
    const rows = await this.#db
      .selectFrom('approvals')
      .selectAll()
      .where('status', '=', 'pending')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toApproval);
  }

  /** Rules that may apply in a session: the stored "Always" rules and the session's own, oldest first. */
  async rulesFor(sessionId: string): Promise<StoredRule[]> {
    const rows = await this.#db
      .selectFrom('approval_rules')
      .selectAll()
      .where((eb) => eb.or([eb('session_id', 'is', null), eb('session_id', '=', sessionId)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRule);
  }

  /** The stored "Always" rules (not the per-session ones), oldest first. */
  async standingRules(): Promise<StoredRule[]> {
    const rows = await this.#db
      .selectFrom('approval_rules')
      .selectAll()
      .where('session_id', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRule);
  }

  /** Removes a standing rule; false when there is none with this id. */
  async removeRule(id: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('approval_rules')
      .where('id', '=', id)
      .where('session_id', 'is', null)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}

async function insertRule(db: Kysely<Database>, rule: StoredRule): Promise<void> {
  await db
    .insertInto('approval_rules')
    .values({
      id: rule.id,
      rule: rule.rule,
      behavior: rule.behavior,
      root: rule.root,
      session_id: rule.sessionId,
      source: rule.source,
      created_at: rule.createdAt,
    })
    .execute();
}

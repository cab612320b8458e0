import type { Generated } from 'kysely';
import type { HarnessName } from '../../core/config.ts';
import type { SessionStatus } from '../coding-session-types.ts';

/**
 * Coding-session tables (migrations 1–99). Times are epoch milliseconds (BIGINT on PostgreSQL), flags are 0/1 integers
 * on both databases, JSON columns are TEXT the store parses.
 */
export interface CodingTables {
  coding_sessions: {
    id: string;
    name: string;
    harness: HarnessName;
    status: SessionStatus;
    prompt: string;
    workdir: string;
    model: string | null;
    backend_session_id: string | null;
    origin_channel: string;
    origin_session_id: string | null;
    /** JSON of the LaunchSpec. */
    spec: string;
    cost_usd: Generated<number>;
    started_at: number;
    completed_at: number | null;
    updated_at: number;
    error: string | null;
    end_reason: string | null;
    budget_exhausted: Generated<number>;
    /** JSON map of channel → { on, seenSeq }. */
    foreground: Generated<string>;
    auto_responds: Generated<number>;
    resumed_from: string | null;
    forked: Generated<number>;
    pid: number | null;
    /** The node that runs (or ran) it: set at launch, at a queued launch's claim and at a resume (migration 90). */
    node: string | null;
    /** A queued launch's placement: the one node it must run on, or null for any. */
    place_on: string | null;
    /** A queued launch's placement: JSON array of labels its node must have, or null for none. */
    place_labels: string | null;
    /** A queued launch's place in the queue: increasing in the order launches were queued (null for others). */
    queue_seq: number | null;
  };
  session_keys: {
    key: string;
    session_id: string;
    /** What the key is of its session: its id (never moves), its name or its backend's session id. */
    kind: 'id' | 'name' | 'backend';
  };
  session_runs: {
    id: Generated<number>;
    session_id: string;
    name: string;
    prompt: string;
    harness: HarnessName;
    kind: 'launch' | 'resume';
    status: SessionStatus;
    cost_usd: Generated<number>;
    started_at: number;
    ended_at: number | null;
    duration_ms: number | null;
  };
  restart_notices: {
    session_id: string;
    interrupted_at: number;
  };
}

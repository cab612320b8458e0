import type { Generated } from 'kysely';
import type { HarnessName } from '../../core/config.ts';
import type { PipelineTier } from '../../core/config-linear-pipeline.ts';
import type { DispatchPhase, DispatchStatus, SessionEndCause } from '../linear-dispatch-types.ts';
import type { PlanningStatus } from '../linear-planning.ts';

/**
 * Linear tables (migrations 400–499): OAuth, webhook deliveries, the effect ledger, dispatches and their sessions, the
 * router's claims and assignments, the job queue and planning sessions.
 */
export interface LinearTables {
  linear_oauth_tokens: {
    profile: string;
    access_token: string;
    refresh_token: string | null;
    token_type: string;
    scope: string;
    expires_at: number | null;
    app_user_id: string | null;
    app_user_name: string | null;
    organization_id: string | null;
    organization_name: string | null;
    created_at: number;
    updated_at: number;
  };
  linear_oauth_states: {
    state: string;
    redirect_uri: string;
    created_at: number;
    expires_at: number;
    consumed_at: number | null;
    outcome: string | null;
  };
  linear_webhook_deliveries: {
    seq: Generated<number>;
    delivery_id: string;
    event_type: string;
    action: string | null;
    order_key: string;
    payload: string;
    /** `DeliveryStatus` (store/linear-delivery-types.ts). */
    status: 'pending' | 'processing' | 'done' | 'dead';
    attempts: Generated<number>;
    next_attempt_at: number;
    last_error: string | null;
    outcome: string | null;
    received_at: number;
    updated_at: number;
    body_digest: string | null;
  };
  linear_effects: {
    key: string;
    /** Claimed (`pending`) before the effect is sent, `done` after. */
    state: 'pending' | 'done';
    created_at: number;
    updated_at: number;
  };
  linear_dispatches: {
    id: string;
    issue_id: string;
    identifier: string;
    title: string;
    agent_session_id: string | null;
    status: DispatchStatus;
    attempt: Generated<number>;
    round_start: Generated<number>;
    tier: PipelineTier;
    tier_reason: string;
    harness: HarnessName;
    model: string | null;
    audit_harness: HarnessName;
    audit_model: string | null;
    profile: string | null;
    repo_path: string;
    branch: string;
    worktree_path: string | null;
    /** JSON of the dispatch context. */
    context: Generated<string>;
    stop_requested: Generated<number>;
    queue_seq: number | null;
    last_error: string | null;
    created_at: number;
    updated_at: number;
    last_activity_at: number;
    completed_at: number | null;
    /** The node that owns the dispatch (claimed it; runs its sessions); null while queued or released. */
    node: Generated<string | null>;
  };
  linear_dispatch_sessions: {
    seq: Generated<number>;
    session_id: string;
    dispatch_id: string;
    phase: DispatchPhase;
    attempt: number;
    try: number;
    end_cause: SessionEndCause | null;
    started_at: number;
    ended_at: number | null;
  };
  linear_claims: {
    key: string;
    owner: string;
    created_at: number;
  };
  linear_assignments: {
    seq: Generated<number>;
    issue_id: string;
    source: string;
    delivery_id: string;
    paired_with: number | null;
    agent_session_id: string | null;
    created_at: number;
  };
  linear_jobs: {
    seq: Generated<number>;
    key: string;
    kind: string;
    serial_key: string;
    agent_session_id: string | null;
    payload: string;
    /** `JobStatus` (store/linear-jobs.ts). */
    status: 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
    attempts: Generated<number>;
    next_at: number;
    last_error: string | null;
    created_at: number;
    updated_at: number;
  };
  linear_planning: {
    id: string;
    project_id: string;
    project_name: string;
    issue_id: string;
    issue_identifier: string;
    team_id: string;
    status: PlanningStatus;
    agent_session_id: string | null;
    turn_count: Generated<number>;
    issues_created: Generated<number>;
    /** JSON array of the interview turns. */
    history: Generated<string>;
    last_audit: string | null;
    created_by: string | null;
    created_at: number;
    updated_at: number;
  };
}

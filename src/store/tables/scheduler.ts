import type { Generated } from 'kysely';
import type { CronRunKind, CronRunStatus } from '../cron-tasks.ts';
import type { HeartbeatRunStatus } from '../heartbeat-store.ts';
import type { WakeEventKind, WakeEventStatus, WakeVia } from '../wake-events.ts';

/** Scheduler tables (migrations 300–399): cron tasks and runs, the heartbeat, and the wake outbox. */
export interface SchedulerTables {
  cron_tasks: {
    id: string;
    name: string;
    schedule: string;
    timezone: string | null;
    prompt: string;
    enabled: Generated<number>;
    created_at: number;
    updated_at: number;
    last_run_at: number | null;
    last_due_at: number | null;
    next_run_at: number | null;
  };
  cron_runs: {
    id: Generated<number>;
    task_id: string;
    due_at: number;
    kind: CronRunKind;
    status: CronRunStatus;
    missed: Generated<number>;
    first_missed_at: number | null;
    prompt: string;
    message_id: string;
    attempts: Generated<number>;
    session_id: string | null;
    duplicate: Generated<number>;
    error: string | null;
    created_at: number;
    finished_at: number | null;
  };
  heartbeat_tasks: {
    id: string;
    title: string;
    prompt: string;
    created_at: number;
    updated_at: number;
  };
  heartbeat_state: {
    id: number;
    anchor_at: number;
    last_run_at: number | null;
    last_reason: string | null;
  };
  heartbeat_runs: {
    id: Generated<number>;
    message_id: string;
    reason: string;
    prompt: string;
    status: HeartbeatRunStatus;
    attempts: Generated<number>;
    tasks: Generated<number>;
    events: Generated<number>;
    session_id: string | null;
    duplicate: Generated<number>;
    error: string | null;
    created_at: number;
    finished_at: number | null;
  };
  heartbeat_events: {
    id: Generated<number>;
    text: string;
    source: string;
    created_at: number;
    run_id: number | null;
  };
  wake_events: {
    id: Generated<number>;
    message_id: string;
    coding_session_id: string;
    kind: WakeEventKind;
    status: WakeEventStatus;
    origin_session_id: string | null;
    text: string;
    target_session_id: string | null;
    via: WakeVia | null;
    attempts: Generated<number>;
    error: string | null;
    created_at: number;
    settled_at: number | null;
  };
}

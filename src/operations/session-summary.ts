import type { Approval } from '../approvals/approval.ts';
import type { Session } from '../coding/session.ts';
import type { WaitingReason } from '../coding/session-log.ts';
import type { HarnessName } from '../core/config.ts';
import { roundUsd } from '../core/usd.ts';
import type { SessionListing } from '../store/coding-session-listings.ts';
import type { SessionStatus } from '../store/coding-session-types.ts';

/** The public view of a coding session that every surface returns. */
export interface SessionSummary {
  id: string;
  name: string;
  harness: HarnessName;
  status: SessionStatus;
  prompt: string;
  workdir: string;
  model: string | null;
  backendSessionId: string | null;
  originChannel: string;
  costUsd: number;
  startedAt: number;
  completedAt: number | null;
  durationMs: number;
  error: string | null;
  endReason: string | null;
  budgetExhausted: boolean;
  multiTurn: boolean;
  /** Channels streaming this session live. */
  foregroundChannels: string[];
  waitingFor: WaitingReason | null;
  /** The tool call waiting for approval (with `waitingFor: 'permission'`), else null. */
  pendingPermission: { tool: string; input: unknown } | null;
  /** The approval request a person is asked to decide (`approve` / `deny` name its id), when there is one. */
  pendingApproval?: Approval;
  resumedFrom: string | null;
  forked: boolean;
  /** Log seq where the current run started (null when the session is not in memory): follow from here. */
  runStartSeq: number | null;
  /** The node of the cluster that runs (or ran) it; null while it waits in the launch queue. */
  node: string | null;
  /** A launch's place in the cluster's queue while it waits for a slot (1: the next to start). */
  queuePosition?: number;
}

/** Builds the summary of a stored session, with live details when its Session is in memory. */
export function summarize(record: SessionListing, live: Session | undefined, now: number): SessionSummary {
  return {
    id: record.id,
    name: record.name,
    harness: record.harness,
    status: record.status,
    prompt: record.prompt,
    workdir: record.workdir,
    model: record.model,
    backendSessionId: record.backendSessionId,
    originChannel: record.originChannel,
    costUsd: roundUsd(record.costUsd),
    startedAt: record.startedAt,
    completedAt: record.completedAt,
    durationMs: (record.completedAt ?? now) - record.startedAt,
    error: record.error,
    endReason: record.endReason,
    budgetExhausted: record.budgetExhausted,
    multiTurn: record.spec.multiTurn,
    foregroundChannels: Object.entries(record.foreground)
      .filter(([, view]) => view.on)
      .map(([channel]) => channel),
    waitingFor: live?.waitingFor ?? null,
    pendingPermission: pendingOf(live),
    ...(live?.pendingPermission?.approval ? { pendingApproval: live.pendingPermission.approval } : {}),
    resumedFrom: record.resumedFrom,
    forked: record.forked,
    runStartSeq: live?.runStartSeq ?? null,
    node: record.node,
  };
}

function pendingOf(live: Session | undefined): SessionSummary['pendingPermission'] {
  const pending = live?.pendingPermission;
  return pending ? { tool: pending.tool, input: pending.input } : null;
}

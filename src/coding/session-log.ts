import type { Approval } from '../store/approvals.ts';
import type { LaunchSpec, SessionStatus, StoredSession } from '../store/coding-session-types.ts';
import type { TurnOutcome, Usage } from './harness.ts';

/** Why a session is waiting for input. */
export type WaitingReason = 'question' | 'turn-end' | 'stalled' | 'permission';

/** Every kind of record a coding session's JSONL log holds (the SSE stream sends exactly these). */
export type SessionLogEntry =
  | { type: 'created'; session: StoredSession }
  | { type: 'run'; kind: 'launch' | 'resume'; prompt: string; spec: LaunchSpec }
  | { type: 'status'; status: SessionStatus; error?: string; endReason?: string }
  | { type: 'backend'; backendSessionId: string; model?: string }
  | { type: 'user'; text: string; source: UserMessageSource; interrupt?: boolean }
  | { type: 'output'; text: string }
  | { type: 'tool'; id: string; name: string; input: unknown }
  | { type: 'toolResult'; id: string; isError: boolean; output?: string }
  | { type: 'question'; text: string }
  | { type: 'permission'; requestId: string; tool: string; input: unknown }
  | { type: 'permissionAnswer'; requestId: string; allow: boolean; message?: string; decidedBy?: string }
  /** An approval was asked (status `pending`) or decided (any other status): the record as it is now. */
  | { type: 'approval'; approval: Approval }
  | { type: 'turn'; outcome: TurnOutcome; costUsd: number; totalCostUsd: number; usage?: Usage }
  | { type: 'waiting'; reason: WaitingReason; preview: string }
  | { type: 'warning'; message: string; malformed?: boolean }
  | { type: 'exited'; code: number | null; error?: string }
  | { type: 'foreground'; channel: string; on: boolean };

/** Who sent a user message into a session. */
export type UserMessageSource = 'launch' | 'resume' | 'user' | 'agent';

export type SessionLogType = SessionLogEntry['type'];

/** Terminal statuses: the session's run is over. */
export const TERMINAL_STATUSES: readonly SessionStatus[] = ['completed', 'failed', 'killed', 'interrupted'];

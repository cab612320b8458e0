// A dispatch row for tests that build one without the store: defaults for every field, `fields` on top.
import type { DispatchRecord, NewDispatch } from '../../src/store/linear-dispatch-types.ts';

/** A `working` dispatch d1 of ENG-1 (claude, medior tier, in /repo on eng-1) with the given fields over it. */
export function dispatchRecord(fields: Partial<DispatchRecord> = {}): DispatchRecord {
  return {
    id: 'd1',
    issueId: 'i1',
    identifier: 'ENG-1',
    title: 'Fix it',
    agentSessionId: 'as1',
    status: 'working',
    attempt: 1,
    roundStart: 1,
    tier: 'medior',
    tierReason: 'default',
    harness: 'claude',
    model: null,
    auditHarness: 'claude',
    auditModel: null,
    profile: null,
    repoPath: '/repo',
    branch: 'eng-1',
    worktreePath: '/repo/wt',
    context: {},
    stopRequested: false,
    queueSeq: null,
    lastError: null,
    createdAt: 0,
    updatedAt: 0,
    lastActivityAt: 0,
    completedAt: null,
    node: null,
    ...fields,
  };
}

/** A dispatch to insert: `id`'s issue ENG-<id>, its repository `repoPath`, created at `createdAt`, worked by `harness`. */
export function newDispatchIn(
  id: string,
  repoPath: string,
  createdAt: number,
  harness: 'claude' | 'codex' = 'claude',
): NewDispatch {
  return {
    id,
    issueId: `i-${id}`,
    identifier: `ENG-${id}`,
    title: `title of ${id}`,
    agentSessionId: `as-${id}`,
    tier: 'medior',
    tierReason: 'estimate 2',
    harness,
    model: null,
    auditHarness: 'claude',
    auditModel: null,
    profile: null,
    repoPath,
    branch: `agent/${id}`,
    context: {},
    createdAt,
  };
}

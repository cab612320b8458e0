// A StoredSession record for tests that build sessions or store rows directly: defaults for every field, the launch
// spec filled in, `overrides` (and `spec`) on top.
import type { LaunchSpec, StoredSession } from '../../src/store/coding-session-types.ts';

/** A stored coding session ('starting', claude, prompt "do it" in /w) with the given fields and spec fields over it. */
export function storedSession(
  overrides: Partial<Omit<StoredSession, 'spec'>> = {},
  spec: Partial<LaunchSpec> = {},
): StoredSession {
  const full: LaunchSpec = {
    harness: 'claude',
    prompt: overrides.prompt ?? 'do it',
    workdir: overrides.workdir ?? '/w',
    maxBudgetUsd: 5,
    permissionMode: 'default',
    multiTurn: true,
    forkSession: false,
    ...spec,
  };
  return {
    id: 's1',
    name: 'one',
    harness: 'claude',
    status: 'starting',
    prompt: full.prompt,
    workdir: full.workdir,
    model: null,
    backendSessionId: null,
    originChannel: 'cli',
    originSessionId: null,
    spec: full,
    costUsd: 0,
    startedAt: 0,
    completedAt: null,
    updatedAt: 0,
    error: null,
    endReason: null,
    budgetExhausted: false,
    foreground: {},
    autoResponds: 0,
    resumedFrom: null,
    forked: false,
    pid: null,
    node: null,
    ...overrides,
  };
}

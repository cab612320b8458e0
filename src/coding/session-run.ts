// One agent run of a coding session: what the harness is asked to start (from the session's stored record) and how the
// run's events are consumed, so that every run ends with one `exited` event however it ends.
import { errorMessage } from '../core/errors.ts';
import type { StoredSession } from '../store/coding-session-types.ts';
import type { HarnessEvent, Run, RunSpec } from './harness.ts';

/** The RunSpec that starts (or resumes) the agent of `record`, from its launch spec; optional fields only when set. */
export function runSpecOf(record: StoredSession): RunSpec {
  const spec = record.spec;
  return {
    sessionId: record.id,
    prompt: spec.prompt,
    workdir: record.workdir,
    permissionMode: spec.permissionMode,
    maxBudgetUsd: spec.maxBudgetUsd,
    ...(spec.model ? { model: spec.model } : {}),
    ...(spec.systemPrompt ? { systemPrompt: spec.systemPrompt } : {}),
    ...(spec.allowedTools ? { allowedTools: spec.allowedTools } : {}),
    ...(spec.resumeBackendId ? { resumeBackendId: spec.resumeBackendId, forkSession: spec.forkSession } : {}),
  };
}

/**
 * Hands every event of `run` to `handle`, in order. A run whose iteration throws is reported as `exited` with the
 * error; one that ends without an exit while `unfinished()` still says so, as `exited` with "ended without reporting
 * an exit". Resolves once the last event is handled.
 */
export async function consumeRun(
  run: Run,
  handle: (event: HarnessEvent) => void,
  unfinished: () => boolean,
): Promise<void> {
  try {
    for await (const event of run) handle(event);
  } catch (error) {
    handle({ type: 'exited', code: null, error: errorMessage(error) });
  }
  if (unfinished()) {
    handle({ type: 'exited', code: null, error: 'the agent run ended without reporting an exit' });
  }
}

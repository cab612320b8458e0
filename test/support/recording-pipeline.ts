// A stand-in for the dispatch pipeline in router tests: records dispatch / onPrompt / onStop, refuses a second
// dispatch of an issue in progress as the real one does, and posts the first thought of a new dispatch to its agent
// session through the (fake-server-backed) LinearApi, so tests can count who posted it.
import type { LinearApi } from '../../src/linear/api/types.ts';
import type { DispatchContext, DispatchResult, PromptResult, StopResult } from '../../src/linear/pipeline/types.ts';
import type { RouterPipeline } from '../../src/linear/router.ts';
import type { DispatchRecord } from '../../src/store/linear-dispatch-types.ts';
import { dispatchRecord } from './dispatch-record.ts';

function record(issueId: string, identifier: string, agentSessionId: string | null, n: number): DispatchRecord {
  return dispatchRecord({
    id: `d-${n}`,
    issueId,
    identifier,
    title: identifier,
    agentSessionId,
    tier: 'junior',
    tierReason: 'test',
    branch: 'b',
    worktreePath: null,
    createdAt: n,
    updatedAt: n,
    lastActivityAt: n,
  });
}

export class RecordingPipeline implements RouterPipeline {
  readonly dispatches: { issueRef: string; ctx: DispatchContext }[] = [];
  readonly prompts: { agentSessionId: string; text: string }[] = [];
  readonly stops: string[] = [];
  /** Thrown by the next dispatch (then cleared). */
  failNext: Error | null = null;
  #api: LinearApi;
  #records: DispatchRecord[] = [];

  constructor(api: LinearApi) {
    this.#api = api;
  }

  async dispatch(issueRef: string, ctx: DispatchContext = {}): Promise<DispatchResult> {
    this.dispatches.push({ issueRef, ctx });
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = null;
      throw error;
    }
    const issue = await this.#api.getIssue(issueRef);
    const active = this.#records.find((r) => r.issueId === issue.id && r.status === 'working');
    if (active) return { outcome: 'duplicate', dispatch: active };
    const d = record(issue.id, issue.identifier, ctx.agentSessionId ?? null, this.#records.length + 1);
    this.#records.push(d);
    if (d.agentSessionId)
      await this.#api.createAgentActivity(d.agentSessionId, { type: 'thought', body: `Picked up ${d.identifier}` });
    return { outcome: 'started', dispatch: d };
  }

  async onPrompt(agentSessionId: string, text: string, _promptId?: string): Promise<PromptResult> {
    this.prompts.push({ agentSessionId, text });
    const d = this.#records.find((r) => r.agentSessionId === agentSessionId);
    return d ? { outcome: 'noted', dispatch: d } : { outcome: 'unknown' };
  }

  async onStop(agentSessionId: string, _stopKey: string): Promise<StopResult> {
    this.stops.push(agentSessionId);
    const d = this.#records.find((r) => r.agentSessionId === agentSessionId);
    if (!d) return { outcome: 'unknown' };
    d.status = 'stopped';
    return { outcome: 'stopped', dispatch: d };
  }

  async announce(_d: DispatchRecord): Promise<void> {}

  async forAgentSession(agentSessionId: string): Promise<DispatchRecord | null> {
    return this.#records.findLast((r) => r.agentSessionId === agentSessionId) ?? null;
  }

  async get(ref: string): Promise<DispatchRecord | null> {
    return this.#records.findLast((r) => r.id === ref || r.issueId === ref || r.identifier === ref) ?? null;
  }

  async list(): Promise<DispatchRecord[]> {
    return [...this.#records];
  }
}

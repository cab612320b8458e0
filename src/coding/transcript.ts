import type { LogRecord } from '../store/jsonl-log.ts';

/** A permission request and what became of it: `pending` until answered; `unanswered` when its run ended first. */
export type PermissionState = 'pending' | 'allowed' | 'denied' | 'unanswered';

/**
 * One entry of what a session did, in log order: a block of assistant text, a tool call (with whether it failed), or
 * a permission request (which tool, what input, and whether it is still pending).
 */
export type TranscriptEntry =
  | { kind: 'text'; seq: number; text: string }
  | { kind: 'tool'; seq: number; id: string; name: string; input: unknown; failed: boolean }
  | { kind: 'permission'; seq: number; requestId: string; tool: string; input: unknown; state: PermissionState };

/** Which kinds of entries a transcript keeps: everything, or only the text (the seed's `output` view). */
export type TranscriptView = 'all' | 'text';

/**
 * Builds the transcript from a session's log records. A permission request whose run ended before an answer (an exit,
 * a terminal status or a new run follows it) is `unanswered`, not pending.
 */
export function transcriptOf(records: readonly LogRecord[], view: TranscriptView = 'all'): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const tools = new Map<string, TranscriptEntry & { kind: 'tool' }>();
  const permissions = new Map<string, TranscriptEntry & { kind: 'permission' }>();
  const closeUnanswered = (): void => {
    for (const p of permissions.values()) if (p.state === 'pending') p.state = 'unanswered';
    permissions.clear();
  };
  for (const r of records) {
    switch (r.type) {
      case 'output':
        if (typeof r.text === 'string') entries.push({ kind: 'text', seq: r.seq, text: r.text });
        break;
      case 'tool': {
        if (view === 'text') break;
        const entry = {
          kind: 'tool' as const,
          seq: r.seq,
          id: String(r.id),
          name: String(r.name),
          input: r.input,
          failed: false,
        };
        tools.set(entry.id, entry);
        entries.push(entry);
        break;
      }
      case 'toolResult': {
        const entry = tools.get(String(r.id));
        if (entry && r.isError === true) entry.failed = true;
        break;
      }
      case 'permission': {
        if (view === 'text') break;
        const entry = {
          kind: 'permission' as const,
          seq: r.seq,
          requestId: String(r.requestId),
          tool: String(r.tool),
          input: r.input,
          state: 'pending' as PermissionState,
        };
        permissions.set(entry.requestId, entry);
        entries.push(entry);
        break;
      }
      case 'permissionAnswer': {
        const entry = permissions.get(String(r.requestId));
        if (entry) entry.state = r.allow === true ? 'allowed' : 'denied';
        break;
      }
      case 'exited':
      case 'run':
        closeUnanswered();
        break;
      case 'status':
        if (r.status !== 'running' && r.status !== 'starting') closeUnanswered();
        break;
      default:
        break;
    }
  }
  return entries;
}

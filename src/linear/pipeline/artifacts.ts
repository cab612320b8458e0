// The artifacts of one dispatch, in `<worktree>/.switchboard/` (kept out of git through the repository's info/exclude):
//   manifest.json   issue, tier, harness, model, status, timestamps (rewritten atomically on every change)
//   plan.md         what the worker was asked to do
//   worker-N.md     the worker's output of attempt N (at most workerOutputMaxBytes, the tail kept)
//   audit-N.json    the auditor's verdict of attempt N
//   log.jsonl       append-only structured log of every phase, including watchdog kills
//   summary.md      the final summary
// Every write goes through src/store/artifact-files.ts.
import { join } from 'node:path';
import { ArtifactDir } from '../../store/artifact-files.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { Verdict } from './verdict.ts';

/** The artifact folder's name inside a worktree. */
export const ARTIFACT_DIR = '.switchboard';
/** Lines added to the repository's info/exclude: the artifact folder (and worktrees under it), but not prompts.yaml. */
export const EXCLUDE_LINES = ['.switchboard/*', '!.switchboard/prompts.yaml'];

/**
 * The last `maxBytes` bytes of `text` (UTF-8), cut at a character boundary, with a first line saying how much was
 * cut; the text itself when it fits. The result is never longer than `maxBytes` bytes. Pure.
 */
export function capTail(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  const marker = (cut: number): string => `[… ${cut} earlier bytes cut]\n`;
  const room = Math.max(0, maxBytes - Buffer.byteLength(marker(bytes.length)));
  let start = bytes.length - room;
  while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start += 1;
  return marker(start) + bytes.subarray(start).toString('utf8');
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The manifest.json content of a dispatch. Pure. */
export function manifestOf(dispatch: DispatchRecord, issueUrl: string | null): Record<string, unknown> {
  return {
    dispatchId: dispatch.id,
    issue: { id: dispatch.issueId, identifier: dispatch.identifier, title: dispatch.title, url: issueUrl },
    agentSessionId: dispatch.agentSessionId,
    status: dispatch.status,
    attempt: dispatch.attempt,
    tier: dispatch.tier,
    tierReason: dispatch.tierReason,
    harness: dispatch.harness,
    model: dispatch.model,
    audit: { harness: dispatch.auditHarness, model: dispatch.auditModel },
    profile: dispatch.profile,
    branch: dispatch.branch,
    worktree: dispatch.worktreePath,
    createdAt: iso(dispatch.createdAt),
    updatedAt: iso(dispatch.updatedAt),
    completedAt: iso(dispatch.completedAt),
    lastError: dispatch.lastError,
  };
}

/** The artifacts of one dispatch's worktree. */
export class DispatchArtifacts {
  readonly dir: string;
  #files: ArtifactDir;
  #maxWorkerBytes: number;

  constructor(worktreePath: string, options: { now: () => number; maxWorkerBytes: number }) {
    this.dir = join(worktreePath, ARTIFACT_DIR);
    this.#files = new ArtifactDir(this.dir, { now: options.now });
    this.#maxWorkerBytes = options.maxWorkerBytes;
  }

  async manifest(dispatch: DispatchRecord, issueUrl: string | null): Promise<void> {
    await this.#files.writeJson('manifest.json', manifestOf(dispatch, issueUrl));
  }

  async plan(text: string): Promise<void> {
    await this.#files.writeText('plan.md', text);
  }

  /** Writes worker-N.md, capped to the tail. */
  async workerOutput(attempt: number, text: string): Promise<void> {
    await this.#files.writeText(`worker-${attempt}.md`, capTail(text, this.#maxWorkerBytes));
  }

  async audit(attempt: number, verdict: Verdict, extra: Record<string, unknown>): Promise<void> {
    await this.#files.writeJson(`audit-${attempt}.json`, { ...verdict, ...extra });
  }

  async summary(text: string): Promise<void> {
    await this.#files.writeText('summary.md', text);
  }

  /** Appends one structured record to log.jsonl (on disk when this resolves). */
  async log(event: string, fields: Record<string, unknown> = {}): Promise<void> {
    await this.#files.append('log.jsonl', { type: event, ...fields });
  }

  async close(): Promise<void> {
    await this.#files.close();
  }
}

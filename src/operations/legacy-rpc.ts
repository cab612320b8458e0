import type { SessionMetrics } from '../store/coding-sessions.ts';
import { formatDuration, formatSessionLine, formatStats } from './format.ts';
import { killOperation } from './kill.ts';
import { launchOperation } from './launch.ts';
import { listOperation } from './list.ts';
import type { Operation } from './operation.ts';
import { outputOperation } from './output.ts';
import type { OutputResult } from './output.ts';
import type { SessionSummary } from './session-summary.ts';
import { statsOperation } from './stats.ts';

/** A seed-compatible RPC method: an operation of the table with the seed's response shape. */
export interface LegacyMethod {
  name: string;
  op: Operation;
  /** Reshapes the operation's result into the seed's response. */
  shape(result: unknown): unknown;
}

function legacySession(s: SessionSummary): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    status: s.status,
    prompt: s.prompt,
    workdir: s.workdir,
    model: s.model,
    costUsd: s.costUsd,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
    durationMs: s.durationMs,
    claudeSessionId: s.backendSessionId,
    harness: s.harness,
    foreground: s.foregroundChannels.length > 0,
    multiTurn: s.multiTurn,
    display: formatSessionLine(s),
  };
}

/** The seed's `claude-code.*` gateway methods, mapped onto the operations table. */
export const LEGACY_METHODS: readonly LegacyMethod[] = [
  {
    name: 'claude-code.sessions',
    op: listOperation as unknown as Operation,
    shape: (r) => {
      const { sessions, nextCursor } = r as { sessions: SessionSummary[]; nextCursor: string | null };
      return { sessions: sessions.map(legacySession), count: sessions.length, nextCursor };
    },
  },
  {
    name: 'claude-code.launch',
    op: launchOperation as unknown as Operation,
    shape: (r) => {
      const s = r as SessionSummary;
      return { id: s.id, name: s.name, status: s.status, workdir: s.workdir, model: s.model, harness: s.harness };
    },
  },
  {
    name: 'claude-code.kill',
    op: killOperation as unknown as Operation,
    shape: (r) => {
      const s = r as SessionSummary;
      return { id: s.id, name: s.name, status: s.status, message: `Session ${s.name} [${s.id}] killed.` };
    },
  },
  {
    name: 'claude-code.output',
    op: outputOperation as unknown as Operation,
    shape: (r) => {
      const o = r as OutputResult;
      return {
        id: o.session.id,
        name: o.session.name,
        status: o.session.status,
        costUsd: o.session.costUsd,
        durationMs: o.session.durationMs,
        duration: formatDuration(o.session.durationMs),
        lines: o.lines,
        lineCount: o.lines.length,
        result: o.result,
      };
    },
  },
  {
    name: 'claude-code.stats',
    op: statsOperation as unknown as Operation,
    shape: (r) => {
      const m = r as SessionMetrics;
      const { completed, failed, killed, running } = m.sessionsByStatus;
      return { ...m, sessionsByStatus: { completed, failed, killed, running }, display: formatStats(m) };
    },
  },
];

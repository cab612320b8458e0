// The seed's `claude-code.*` RPC response shapes. Each is the typed `legacyRpc` alias of one operation of the table
// (list, launch, kill, output, stats): the method name and how that operation's own result is reshaped.
import type { SessionMetrics } from '../store/coding-session-runs.ts';
import { formatDuration, formatSessionLine, formatStats } from './format.ts';
import type { SessionListResult } from './list.ts';
import type { LegacyRpc } from './operation.ts';
import type { OutputResult } from './output.ts';
import type { SessionSummary } from './session-summary.ts';

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

/** `claude-code.sessions`: the list operation's page in the seed's shape. */
export const legacySessions: LegacyRpc<SessionListResult> = {
  method: 'claude-code.sessions',
  shape: ({ sessions, nextCursor }) => ({ sessions: sessions.map(legacySession), count: sessions.length, nextCursor }),
};

/** `claude-code.launch`: the launched session in the seed's shape. */
export const legacyLaunch: LegacyRpc<SessionSummary> = {
  method: 'claude-code.launch',
  shape: (s) => ({ id: s.id, name: s.name, status: s.status, workdir: s.workdir, model: s.model, harness: s.harness }),
};

/** `claude-code.kill`: the killed session with the seed's message. */
export const legacyKill: LegacyRpc<SessionSummary> = {
  method: 'claude-code.kill',
  shape: (s) => ({ id: s.id, name: s.name, status: s.status, message: `Session ${s.name} [${s.id}] killed.` }),
};

/** `claude-code.output`: a session's output in the seed's shape. */
export const legacyOutput: LegacyRpc<OutputResult> = {
  method: 'claude-code.output',
  shape: (o) => ({
    id: o.session.id,
    name: o.session.name,
    status: o.session.status,
    costUsd: o.session.costUsd,
    durationMs: o.session.durationMs,
    duration: formatDuration(o.session.durationMs),
    lines: o.lines,
    lineCount: o.lines.length,
    result: o.result,
  }),
};

/** `claude-code.stats`: the metrics with the seed's four status counts and a display text. */
export const legacyStats: LegacyRpc<SessionMetrics> = {
  method: 'claude-code.stats',
  shape: (m) => {
    const { completed, failed, killed, running } = m.sessionsByStatus;
    return { ...m, sessionsByStatus: { completed, failed, killed, running }, display: formatStats(m) };
  },
};

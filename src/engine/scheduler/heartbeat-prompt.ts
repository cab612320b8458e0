// The heartbeat's one batch prompt: every task, then every event queued since the last run.
import type { HeartbeatEvent, HeartbeatTask } from '../../store/heartbeat-store.ts';

/** Why a heartbeat run happens: its timer, or an explicit request (never skipped, even with nothing to list). */
export type HeartbeatReason = 'timer' | 'wake' | 'hook' | 'manual';

/** Text carried by a run without being queued first (a wake that found no session to go to). */
export interface ExtraEvent {
  text: string;
  source: string;
  /** When it happened; default: the run's time. */
  at?: number;
}

/**
 * Builds the batch prompt of one heartbeat run at `now`: a header with the reason, the tasks as numbered sections,
 * then the queued events (stored ones and `extra`), oldest first. Always returns a non-empty prompt: an explicit run
 * with no tasks and no events says so instead of being skipped.
 */
export function heartbeatPrompt(input: {
  now: number;
  reason: HeartbeatReason;
  tasks: HeartbeatTask[];
  events: HeartbeatEvent[];
  extra?: ExtraEvent[];
}): string {
  const events = [
    ...input.events.map((e) => ({ text: e.text, source: e.source, at: e.createdAt })),
    ...(input.extra ?? []).map((e) => ({ text: e.text, source: e.source, at: e.at ?? input.now })),
  ];
  const lines = [`# Heartbeat run — ${new Date(input.now).toISOString()} (${input.reason})`, ''];
  if (input.tasks.length === 0 && events.length === 0) {
    lines.push(
      'This run was requested explicitly; there are no heartbeat tasks and no queued events.',
      'Look over the running coding sessions (claude_sessions) and report anything that needs attention; if nothing does, reply HEARTBEAT_OK.',
    );
    return lines.join('\n');
  }
  lines.push('Work through every task and event below, in order. If nothing needs attention, reply HEARTBEAT_OK.', '');
  if (input.tasks.length > 0) {
    lines.push('## Tasks', '');
    input.tasks.forEach((task, i) =>
      lines.push(`### ${i + 1}. ${task.title}`, `id: ${task.id}`, '', task.prompt.trim(), ''),
    );
  } else {
    lines.push('There are no heartbeat tasks; only the events below.', '');
  }
  if (events.length > 0) {
    lines.push('## Events', '');
    events.forEach((e, i) =>
      lines.push(`### Event ${i + 1} (${e.source}, ${new Date(e.at).toISOString()})`, '', e.text.trim(), ''),
    );
  }
  return lines.join('\n').trimEnd();
}

import type { Clock } from '../core/clock.ts';
import { CliError } from './cli-error.ts';
import type { Connection } from './client.ts';
import { daemonFetch } from './client.ts';
import type { WireRecord } from './render.ts';
import { followStep, renderRecord } from './render.ts';
import { parseSse } from './sse.ts';

/** How a session is followed: from which record, in which form, to where, and the clock of its reconnect pauses. */
export interface FollowOptions {
  /** First log seq to show. */
  from: number;
  json: boolean;
  write: (line: string) => void;
  /** Times the pause before a reconnect (its timers must hold the process open). */
  clock: Clock;
  /** How many times to reconnect after the stream drops (default 5). */
  retries?: number;
}

/**
 * Streams a session's log from `from` until it waits for input (not a mere `stalled` silence) or ends, reconnecting with Last-Event-ID when the
 * stream drops so nothing is missed or shown twice. Returns the exit code (1 if the session failed).
 */
export async function followSession(
  conn: Connection,
  session: { id: string; name: string },
  options: FollowOptions,
): Promise<number> {
  let lastSeq = options.from - 1;
  let retries = options.retries ?? 5;
  for (;;) {
    const resuming = lastSeq >= options.from;
    const path = `/sessions/${encodeURIComponent(session.id)}/events${resuming ? '' : `?from=${options.from}`}`;
    const response = await daemonFetch(
      conn,
      path,
      resuming ? { headers: { 'last-event-id': String(lastSeq) } } : {},
    ).catch((error: unknown) => {
      if (retries > 0 && resuming) return null;
      throw error;
    });
    if (response && !response.ok) throw new CliError(`cannot follow ${session.name}: HTTP ${response.status}`, 1);
    if (response?.body) {
      try {
        for await (const event of parseSse(response.body)) {
          const record = JSON.parse(event.data) as WireRecord;
          if (record.seq < options.from || record.seq <= lastSeq) continue;
          lastSeq = record.seq;
          if (options.json) options.write(JSON.stringify(record));
          else for (const line of renderRecord(record, session.name)) options.write(line);
          const step = followStep(record);
          if (step.done) return step.exitCode;
        }
      } catch {
        // The stream dropped: reconnect below.
      }
    }
    if (retries <= 0) throw new CliError(`lost the event stream of ${session.name}`, 1);
    retries -= 1;
    await new Promise<void>((resolve) => options.clock.after(500, resolve));
  }
}

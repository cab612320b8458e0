// The asking side of a `code_run` turn: waits for its session to end wherever it runs (this node, another node of the
// cluster, or still in the launch queue), through `SessionManager.follow` (the local log, or the cluster's records on
// PostgreSQL) and the stored row, and kills it (through `kill`, which reaches the node running it) when the call is
// aborted. Its watchdog is not here: the node running the session arms it (code-run-watchdog.ts).
import type { Clock, Timer } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { StoredSession } from '../store/coding-session-types.ts';
import type { SessionManager } from './session-manager.ts';

/** True once a session's status is final (not starting, running, or waiting in the cluster's queue). */
function isEnded(status: unknown): boolean {
  return status === 'completed' || status === 'failed' || status === 'killed' || status === 'interrupted';
}

/** How many reads of an ended row end the wait without the session's final `status` record. */
const ROW_ONLY_READS = 3;

/** Log records the session writes itself when it launches (not signs of a running agent process). */
const LAUNCH_RECORDS = new Set(['created', 'run', 'user', 'status']);

/** The exit code in an `exited` record: its code, or the one an SDK error message names ("exited with code 3"). */
export function exitCodeOf(record: Readonly<Record<string, unknown>>): number | null {
  if (typeof record.code === 'number') return record.code;
  const match = typeof record.error === 'string' ? /exit(?:ed)?(?: with)?(?: code)?\s+(\d+)/i.exec(record.error) : null;
  return match ? Number(match[1]) : null;
}

/** How often the row of an ended session is read again until it says so (its node commits it after its records). */
const ROW_CATCH_UP_MS = 50;

/** What waiting needs. */
export interface CodeRunWaitDeps {
  sessions: Pick<SessionManager, 'follow' | 'get' | 'liveById'>;
  clock: Clock;
  logger: Logger;
  /** How long to wait for the agent process to be gone once the session ended (ms). */
  processGoneMs: number;
  /** How often the stored row is read as well (a queued launch cancelled, a lost node's session: no record says so). */
  pollMs: number;
}

/** How a wait ended: the final row, the agent's exit code (from its `exited` record) and whether the call stopped it. */
export interface CodeRunEnd {
  record: StoredSession;
  exitCode: number | null;
  stopped: boolean;
}

/**
 * Waits for session `id` to end and its agent process to be gone (bounded by `processGoneMs`), so nothing keeps writing
 * in the working directory after code_run answered, and (a session running here) for its row to be committed.
 * `signal` aborting calls `kill(id)` once; a kill that fails is logged and the wait goes on (the session ends by its
 * watchdog or on its own).
 */
export async function waitForCodeRun(
  deps: CodeRunWaitDeps,
  id: string,
  kill: (id: string) => Promise<void>,
  signal?: AbortSignal,
): Promise<CodeRunEnd> {
  const { sessions, clock, logger } = deps;
  let exitCode: number | null = null;
  let stopped = false;
  let ended = false;
  let gone = false;
  let agentSeen = false;
  let wake: () => void = () => undefined;
  const changed = (): void => wake();
  const unfollow = sessions.follow(id, 1, (record) => {
    if (record.type === 'exited') {
      exitCode = exitCodeOf(record);
      gone = true;
    } else if (record.type === 'status') {
      if (isEnded(record.status)) ended = true;
    } else if (!LAUNCH_RECORDS.has(record.type)) {
      agentSeen = true;
    }
    changed();
  });
  // The row alone ends the wait for a launch cancelled in the queue (it never ran: no record says so). A session that
  // ran ends with its `status` record, which comes after every output record; the row can be committed before the
  // records are, so it ends the wait only after ROW_ONLY_READS reads (its node lost before its records were stored).
  let rowEndedReads = 0;
  const readRow = (): void => {
    sessions
      .get(id)
      .then((row) => {
        if (!isEnded(row.status)) return;
        rowEndedReads += 1;
        if (row.node === null || rowEndedReads >= ROW_ONLY_READS) {
          ended = true;
          changed();
        }
      })
      .catch((error: unknown) => logger.warn({ err: errorMessage(error), session: id }, 'code_run: reading failed'));
  };
  const poll: Timer = clock.every(deps.pollMs, readRow);
  const onAbort = (): void => {
    if (stopped) return;
    stopped = true;
    kill(id).catch((error: unknown) =>
      logger.warn({ err: errorMessage(error), session: id }, 'code_run could not kill its session'),
    );
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  let bound = null as Timer | null;
  try {
    readRow();
    await new Promise<void>((resolve) => {
      const check = (): void => {
        // A run whose agent never started has no process to wait for.
        if (ended && (gone || !agentSeen)) resolve();
        else if (ended && !bound) bound = clock.after(deps.processGoneMs, resolve);
      };
      wake = check;
      check();
    });
  } finally {
    bound?.cancel();
    poll.cancel();
    unfollow();
    signal?.removeEventListener('abort', onAbort);
  }
  // A session that ran here: its row's last changes (the final status) are committed before code_run answers, so a
  // listing read after the answer says what the answer says (over PostgreSQL's pool the row commits after the record).
  await sessions.liveById(id)?.stored;
  return { record: await endedRow(deps, id), exitCode, stopped };
}

/**
 * Session `id`'s row once it says the session ended. A session run on another node of the cluster commits its row
 * after the records that ended the wait, so the row is read again every ROW_CATCH_UP_MS until it is final, for at most
 * `processGoneMs` (then the last read is answered as it is).
 */
async function endedRow(deps: CodeRunWaitDeps, id: string): Promise<StoredSession> {
  const { sessions, clock } = deps;
  const deadline = clock.now() + deps.processGoneMs;
  for (;;) {
    const row = await sessions.get(id);
    if (isEnded(row.status) || clock.now() >= deadline) return row;
    await new Promise<void>((resolve) => clock.after(ROW_CATCH_UP_MS, resolve));
  }
}

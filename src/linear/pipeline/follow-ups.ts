// A user's follow-up in a dispatch's agent session (Linear's `prompted`): it reopens a finished dispatch for a new
// round, goes straight to a running worker (on this node or, in a cluster, on the node running it), or is kept for
// the next worker and audit prompts. A redelivered prompt (by its activity id) is recognised and not taken twice.
import type { SessionManager } from '../../coding/session-manager.ts';
import type { Clock } from '../../core/clock.ts';
import type { LinearPipelineConfig } from '../../core/config-linear-pipeline.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchContextData, DispatchRecord } from '../../store/linear-dispatch-types.ts';
import { FINISHED_DISPATCH_STATUSES } from '../../store/linear-dispatch-types.ts';
import type { DispatchStore } from '../../store/linear-dispatches.ts';
import type { DispatchJournal } from './dispatch-journal.ts';
import type { DispatchReporter } from './dispatch-reporter.ts';
import { transitionDispatch } from './dispatch-transitions.ts';
import { sanitizePromptInput } from './prompts.ts';
import type { RemoteSessions } from './remote-sessions.ts';
import type { PromptResult } from './types.ts';

/** Follow-up messages kept per dispatch (the newest). */
const MAX_USER_MESSAGES = 10;
/** Prompt activity ids remembered per dispatch (redeliveries of older ones come long after they could matter). */
const MAX_PROMPT_IDS = 50;

/** What the follow-ups are built from: the full dispatch store (not one node's view) and the calls made on the rest. */
export interface FollowUpsDeps {
  store: Pick<DispatchStore, 'latestForAgentSession' | 'compareAndSwap' | 'get' | 'update' | 'currentSession'>;
  clock: Clock;
  logger: Logger;
  pc: Pick<LinearPipelineConfig, 'promptInputMaxChars' | 'maxAttempts'>;
  sessions: Pick<SessionManager, 'liveById' | 'send'>;
  /** In a cluster: the dispatches' sessions on other nodes; null on a node alone. */
  remote: Pick<RemoteSessions, 'nodeOf' | 'prompt'> | null;
  reporter: Pick<DispatchReporter, 'tell' | 'thought'>;
  journal: Pick<DispatchJournal, 'record'>;
  /** Starts queued dispatches while slots are free (a reopened dispatch may start at once). */
  pump: () => Promise<void>;
}

/** Takes in users' follow-ups; see `onPrompt`. */
export class FollowUps {
  readonly #d: FollowUpsDeps;

  constructor(deps: FollowUpsDeps) {
    this.#d = deps;
  }

  /**
   * A user's follow-up in the agent session. A finished dispatch (done, stuck or stopped) is reopened with it: stop
   * flag cleared, a new round of `maxAttempts`, queued. A running worker gets it at once (its current turn is
   * interrupted and it continues with the message). Otherwise it is kept for the next worker and audit prompts.
   */
  async onPrompt(agentSessionId: string, text: string, promptId?: string): Promise<PromptResult> {
    const { store, clock, pc } = this.#d;
    const d = await store.latestForAgentSession(agentSessionId);
    if (!d) return { outcome: 'unknown' };
    // The prompt's id is stored with the message, in the same write: a redelivery of it (after a crash) is recognised.
    if (promptId && d.context.promptIds?.includes(promptId)) return { outcome: 'duplicate', dispatch: d };
    const clean = sanitizePromptInput(text, pc.promptInputMaxChars).trim();
    const userMessages = clean
      ? [...(d.context.userMessages ?? []), clean].slice(-MAX_USER_MESSAGES)
      : (d.context.userMessages ?? []);
    const promptIds = promptId
      ? [...(d.context.promptIds ?? []), promptId].slice(-MAX_PROMPT_IDS)
      : d.context.promptIds;
    const context: DispatchContextData = { ...d.context, userMessages, ...(promptIds ? { promptIds } : {}) };
    if (FINISHED_DISPATCH_STATUSES.includes(d.status)) {
      const next = await transitionDispatch(store, d.id, d.status, 'queued', clock.now(), {
        attempt: d.attempt,
        patch: {
          stopRequested: false,
          attempt: d.attempt + 1,
          roundStart: d.attempt + 1,
          lastError: null,
          context: d.status === 'done' ? { ...context, lastGaps: [] } : context,
        },
      });
      if (!next) return this.onPrompt(agentSessionId, text, promptId);
      await this.#d.journal.record(next, 'reopened', { from: d.status });
      void this.#d.reporter.tell(next, {
        type: 'thought',
        body: `Picking ${d.identifier} up again with your message (a new round of up to ${pc.maxAttempts} attempts).`,
      });
      await this.#d.pump();
      return { outcome: 'reopened', dispatch: (await store.get(d.id)) ?? next };
    }
    const updated = (await store.update(d.id, { context }, clock.now())) ?? d;
    if (d.status === 'working' && clean) {
      const forwarded = await this.#toWorker(d, updated, clean);
      if (forwarded) return forwarded;
    }
    const when =
      d.status === 'auditing' ? 'the next attempt, if the audit asks for one' : 'the task when the worker starts';
    this.#d.reporter.thought(updated, `Noted: your message will be part of ${when}.`);
    await this.#d.journal.record(updated, 'prompt-noted', {});
    return { outcome: 'noted', dispatch: updated };
  }

  /** Passes the message to the dispatch's running worker, here or on its node; null when no worker took it. */
  async #toWorker(d: DispatchRecord, updated: DispatchRecord, clean: string): Promise<PromptResult | null> {
    const { store, sessions, remote, reporter, journal, logger } = this.#d;
    const row = await store.currentSession(d.id);
    if (row?.phase === 'worker' && sessions.liveById(row.sessionId)?.isActive) {
      try {
        await sessions.send(row.sessionId, clean, { source: 'user', interrupt: true });
        reporter.thought(updated, 'Passed your message to the worker.');
        await journal.record(updated, 'prompt-forwarded', { sessionId: row.sessionId });
        return { outcome: 'forwarded', dispatch: updated };
      } catch (error) {
        logger.warn({ err: errorMessage(error), dispatch: d.id }, 'could not pass a prompt to the worker');
      }
    }
    const node = row?.phase === 'worker' && remote ? await remote.nodeOf(row.sessionId) : null;
    if (row && node && remote) {
      try {
        await remote.prompt(node, row.sessionId, clean);
        reporter.thought(updated, 'Passed your message to the worker.');
        await journal.record(updated, 'prompt-forwarded', { sessionId: row.sessionId, node });
        return { outcome: 'forwarded', dispatch: updated };
      } catch (error) {
        logger.warn(
          { err: errorMessage(error), dispatch: d.id, node },
          'could not pass a prompt to the worker on another node',
        );
      }
    }
    return null;
  }
}

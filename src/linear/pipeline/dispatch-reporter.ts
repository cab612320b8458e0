// Telling people about a dispatch: its Linear agent session (a throttled activity stream per dispatch, keyed effects
// sent once), a comment on the issue when the agent session cannot take it, and the user's chat channel.
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { DispatchRecord } from '../../store/linear-dispatch-types.ts';
import type { ActivityContent, LinearApi } from '../api/types.ts';
import type { LinearEffects } from '../effects.ts';
import { ActivityStream } from './activity-stream.ts';
import type { DispatchJournal } from './dispatch-journal.ts';
import type { PipelineNotifier } from './types.ts';

/** What the reporter is built from. */
export interface DispatchReporterDeps {
  linear: Pick<LinearApi, 'createAgentActivity' | 'createComment' | 'updateAgentSession'>;
  /** The durable ledger of what was told to Linear (keyed effects are sent once). */
  effects: Pick<LinearEffects, 'run'>;
  notifier: PipelineNotifier;
  /** A stuck dispatch is recorded in its journal too. */
  journal: Pick<DispatchJournal, 'record'>;
  /** Read when a session is linked: the web page's address (`publicUrl`, or loopback and the port). */
  gateway: Pick<Config['gateway'], 'publicUrl' | 'port'>;
  clock: Clock;
  logger: Logger;
  /** `linear.pipeline.activityThrottleMs`. */
  throttleMs: number;
}

/** Reports each dispatch to Linear and to the user's chat. */
export class DispatchReporter {
  #deps: DispatchReporterDeps;
  #streams = new Map<string, ActivityStream>();

  constructor(deps: DispatchReporterDeps) {
    this.#deps = deps;
  }

  /** The Linear activity stream of a dispatch, or null when it has no agent session. */
  stream(d: DispatchRecord): ActivityStream | null {
    if (!d.agentSessionId) return null;
    let stream = this.#streams.get(d.id);
    if (!stream || stream.agentSessionId !== d.agentSessionId) {
      const { linear, clock, logger, throttleMs } = this.#deps;
      stream = new ActivityStream({ linear, agentSessionId: d.agentSessionId, clock, logger, throttleMs });
      this.#streams.set(d.id, stream);
    }
    return stream;
  }

  /** Buffers a thought for the dispatch's agent session (no-op without one). */
  thought(d: DispatchRecord, body: string): void {
    this.stream(d)?.thought(body);
  }

  /**
   * Links the dispatch's Linear agent session to the coding session's live view on the web page (the agent session's
   * external URL), so people can watch the work from Linear. Best effort: a failure is logged, the dispatch goes on.
   */
  async linkSession(d: DispatchRecord, codingSessionId: string): Promise<void> {
    const { gateway, linear, logger } = this.#deps;
    const base = gateway.publicUrl ?? (gateway.port > 0 ? `http://127.0.0.1:${gateway.port}` : undefined);
    if (!d.agentSessionId || !base) return;
    const url = `${base.replace(/\/+$/, '')}/#session=${encodeURIComponent(codingSessionId)}`;
    try {
      await linear.updateAgentSession(d.agentSessionId, {
        externalUrls: [{ label: 'switchboard: live session', url }],
      });
    } catch (error) {
      logger.warn({ err: errorMessage(error), dispatch: d.id }, 'could not set the Linear agent session link');
    }
  }

  /**
   * Posts a message to the dispatch's agent session right away. A response, error or elicitation that cannot go
   * there (no agent session, or Linear refused it) becomes one comment on the issue instead, never both.
   */
  async tell(d: DispatchRecord, content: ActivityContent): Promise<void> {
    const stream = this.stream(d);
    if (stream && (await stream.post(content))) return;
    if (content.type === 'thought' || content.type === 'action') return;
    try {
      await this.#deps.linear.createComment(d.issueId, content.body);
    } catch (error) {
      this.#deps.logger.error({ err: errorMessage(error), dispatch: d.id }, 'could not post a Linear comment');
    }
  }

  /**
   * `tell`, once for the effect `key` across crashes and redeliveries: after whatever the dispatch's stream has
   * buffered, the activity is created with the key's client id (exactly once, see effects.ts). A response, error or
   * elicitation Linear refuses becomes one comment on the issue (keyed too). Failures are logged.
   */
  async tellOnce(d: DispatchRecord, content: ActivityContent, key: string): Promise<void> {
    const { linear, logger, effects } = this.#deps;
    const stream = this.stream(d);
    const agentSessionId = d.agentSessionId;
    if (stream && agentSessionId && stream.alive) {
      await stream.flush();
      try {
        await effects.run(key, 'keyed', (id) => linear.createAgentActivity(agentSessionId, content, { id }));
        return;
      } catch (error) {
        logger.warn(
          { err: errorMessage(error), dispatch: d.id, effect: key },
          'could not post a Linear agent activity',
        );
      }
    }
    if (content.type === 'thought' || content.type === 'action') return;
    try {
      await effects.run(`${key}/comment`, 'keyed', (id) => linear.createComment(d.issueId, content.body, { id }));
    } catch (error) {
      logger.error({ err: errorMessage(error), dispatch: d.id, effect: key }, 'could not post a Linear comment');
    }
  }

  /** Tells the user in Linear and on their chat channel that a dispatch is stuck, and records it. */
  async tellStuck(d: DispatchRecord, reason: string): Promise<void> {
    const next = d.agentSessionId
      ? 'Send a message in this agent session to try again with your guidance.'
      : 'Assign the issue again to retry.';
    const body = `${d.identifier} is stuck: ${reason}\n\n${next}`;
    await this.#deps.journal.record(d, 'stuck', { reason });
    await this.tell(d, { type: 'error', body });
    try {
      await this.#deps.notifier.notify(`Linear ${d.identifier} (${d.title}) is stuck: ${reason}`);
    } catch (error) {
      this.#deps.logger.error({ err: errorMessage(error), dispatch: d.id }, 'could not notify the user');
    }
  }

  /**
   * Tells the user's chat channel that a dispatch is done (when the notifier wants to hear it), with its pull
   * request's URL when it ended in one; failures are logged.
   */
  async notifyDone(d: DispatchRecord, verdict: { testResults: string }, prUrl?: string): Promise<void> {
    const { notifier } = this.#deps;
    if (!notifier.done) return;
    try {
      await notifier.done(
        `Linear ${d.identifier} (${d.title}) is done: the audit passed on attempt ${d.attempt - d.roundStart + 1}${verdict.testResults ? ` (tests: ${verdict.testResults})` : ''}. Branch ${d.branch}${prUrl ? `, pull request ${prUrl}` : ''}.`,
      );
    } catch (error) {
      this.#deps.logger.error({ err: errorMessage(error), dispatch: d.id }, 'could not notify the user');
    }
  }

  /** Sends what is buffered for a dispatch and forgets its stream. */
  async close(dispatchId: string): Promise<void> {
    const stream = this.#streams.get(dispatchId);
    this.#streams.delete(dispatchId);
    await stream?.close();
  }

  /** Closes every stream. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#streams.keys()].map((id) => this.close(id)));
  }
}

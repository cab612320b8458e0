// What becomes of a Linear event whose handling failed: a failure that may pass is thrown again (the webhook worker
// retries the delivery); any other is logged and, where there is a place (the agent session, the comment's thread),
// told in Linear once per event — unless the pipeline already told it (`AlreadyReported`).
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearApi } from './api/types.ts';
import type { LinearEffects } from './effects.ts';
import { eventKey } from './event-keys.ts';
import { isRetryable } from './jobs.ts';
import type { LinearEvent } from './webhooks/events.ts';

/** A failure the user was already told about (the pipeline posts its own error activity); wraps the original. */
export class AlreadyReported extends Error {
  readonly original: unknown;
  constructor(original: unknown) {
    super(errorMessage(original));
    this.name = 'AlreadyReported';
    this.original = original;
  }
}

/** What reporting a failed event uses: the two Linear calls that tell it, keyed once per event in the ledger. */
export interface EventFailureDeps {
  api: Pick<LinearApi, 'createAgentActivity' | 'createComment'>;
  effects: Pick<LinearEffects, 'run'>;
  logger: Logger;
}

/**
 * Settles an event whose handling threw `error`. Rejects with the cause when it may pass (so the delivery is retried);
 * otherwise logs it and, unless it is `AlreadyReported`, tells it in Linear under `<eventKey>/failed` (an error
 * activity in the agent session, or a reply in the comment's thread). A failure to tell it is logged, not thrown.
 */
export async function reportEventFailure(deps: EventFailureDeps, event: LinearEvent, error: unknown): Promise<void> {
  const { logger, api, effects } = deps;
  const cause = error instanceof AlreadyReported ? error.original : error;
  const meta = { delivery: event.deliveryId, type: event.type, err: errorMessage(cause) };
  if (isRetryable(cause)) {
    logger.warn(meta, 'linear event handling failed; the delivery will be retried');
    throw cause;
  }
  logger.error(meta, 'linear event handling failed');
  if (error instanceof AlreadyReported) return;
  const text = `switchboard could not handle this: ${errorMessage(cause)}`;
  const key = `${eventKey(event)}/failed`;
  try {
    if (event.type.startsWith('agentSession.') && 'agentSessionId' in event) {
      const agentSessionId = event.agentSessionId;
      await effects.run(key, 'keyed', (id) =>
        api.createAgentActivity(agentSessionId, { type: 'error', body: text }, { id }),
      );
    } else if (event.type === 'comment.created' && event.issue) {
      const issueId = event.issue.id;
      const parentId = event.parentId ?? event.commentId;
      await effects.run(key, 'keyed', (id) => api.createComment(issueId, text, { parentId, id }));
    }
  } catch (reportError) {
    logger.error(
      { ...meta, reportErr: errorMessage(reportError) },
      'linear: could not report a failed event in Linear',
    );
  }
}

// Where an answer of the router's work goes in Linear: into the agent session it came from (an activity), or as a
// comment on the issue (a reply in the comment's thread). An activity Linear refuses becomes a comment instead.
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { LinearApi } from './api/types.ts';

export type ReplyTarget =
  /** The Linear agent session the request came from (its issue takes the fallback comment). */
  | { kind: 'session'; agentSessionId: string; issueId: string }
  /** A comment on the issue; `parentId` makes it a reply in that comment's thread. */
  | { kind: 'comment'; issueId: string; parentId?: string };

/** How an answer shows in an agent session: a question back (elicitation), the final answer, or an error. */
export type ReplyKind = 'elicitation' | 'response' | 'error';

/**
 * Posts `body` to `target`. A session activity that fails (deleted session, user error) falls back to one comment on
 * the issue. Throws only when the comment fails too (the caller logs it or retries).
 */
export async function postReply(
  api: LinearApi,
  logger: Logger,
  target: ReplyTarget,
  body: string,
  kind: ReplyKind = 'response',
): Promise<void> {
  if (target.kind === 'session') {
    try {
      await api.createAgentActivity(target.agentSessionId, { type: kind, body });
      return;
    } catch (error) {
      logger.warn(
        { err: errorMessage(error), agentSession: target.agentSessionId },
        'linear: could not post to the agent session; commenting instead',
      );
    }
    await api.createComment(target.issueId, body);
    return;
  }
  await api.createComment(target.issueId, body, target.parentId ? { parentId: target.parentId } : undefined);
}

/** Cuts `text` to `max` characters with a note saying so. */
export function capReply(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 40)).trimEnd()}\n\n… (cut: ${text.length - max + 40} more characters)`;
}

// AppUserNotifications from Linear: "assigned to you" is the assignment (paired with the Issue webhook's report of it),
// a comment mention or a new comment on a followed issue is routed after `linear.mentions.notificationDelaySec` as a
// durable job (by then the Comment webhook or an agent session has usually claimed the comment, and the job stands
// down); the other kinds need nothing.
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { AssignmentSource } from '../store/linear-claims.ts';
import type { JobRunner } from './jobs.ts';
import { JOB } from './router-jobs.ts';
import type { LinearEvent } from './webhooks/events.ts';

/** What notification routing is built from. */
export interface NotificationRoutingDeps {
  config: Pick<Config, 'linear'>;
  /** The delayed mention is a durable job (`notification-mention:<comment>`, queued once). */
  jobs: Pick<JobRunner, 'enqueue'>;
  /** Takes an assignment over (one dispatch per assignment, whichever webhook reports it first). */
  assigned: (issueId: string, source: AssignmentSource, deliveryId: string) => Promise<void>;
  clock: Clock;
  logger: Logger;
}

/** Routes `appUserNotification` events (see the file comment). */
export class NotificationRouting {
  readonly #d: NotificationRoutingDeps;

  constructor(deps: NotificationRoutingDeps) {
    this.#d = deps;
  }

  /** Handles one notification; resolves once its assignment is taken over or its mention job queued (or nothing). */
  async route(event: Extract<LinearEvent, { type: 'appUserNotification' }>): Promise<void> {
    const { config, clock, logger } = this.#d;
    const issueId = event.issue?.id;
    if (event.action === 'issueAssignedToYou' && issueId) {
      await this.#d.assigned(issueId, 'notification', event.deliveryId);
      return;
    }
    if ((event.action === 'issueCommentMention' || event.action === 'issueNewComment') && issueId && event.comment) {
      const { created } = await this.#d.jobs.enqueue({
        key: `notification-mention:${event.comment.id}`,
        kind: JOB.notificationMention,
        serialKey: `comment:${event.comment.id}`,
        runAt: clock.now() + config.linear.mentions.notificationDelaySec * 1000,
        payload: {
          issueId,
          commentId: event.comment.id,
          body: event.comment.body,
          author: event.actor?.name ?? null,
          addressed: event.action === 'issueCommentMention',
        },
      });
      if (created)
        logger.info(
          { comment: event.comment.id, action: event.action },
          'linear notification: comment routed after the notification delay',
        );
      return;
    }
    logger.info(
      { action: event.action, issue: event.issue?.identifier ?? issueId ?? null },
      'linear notification needs nothing from switchboard',
    );
  }
}

// The stable key of a Linear event: the same for every delivery of it (a redelivery under a new linear-delivery id,
// a replay after a crash), so what the router tells Linear about it can be keyed in the effect ledger.
import type { LinearEvent } from './webhooks/events.ts';

/** The key naming what `event` reports, independent of which delivery brought it. */
export function eventKey(event: LinearEvent): string {
  switch (event.type) {
    case 'agentSession.created':
      return `created:${event.agentSessionId}`;
    case 'agentSession.prompted':
      return `prompt:${event.activityId}`;
    case 'agentSession.stop':
      return `stop:${event.activityId}`;
    case 'comment.created':
      return `comment:${event.commentId}`;
    case 'issue.created':
      return `issue-created:${event.issue.id}`;
    case 'issue.assigned':
      return `delivery:${event.deliveryId}`;
    case 'appUserNotification':
      return `notification:${event.notificationId}`;
  }
}

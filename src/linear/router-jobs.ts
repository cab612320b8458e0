// The kinds of durable jobs the router queues (store/linear-jobs.ts) and how each runs and reports a final failure:
// mention answers, routing of a mention reported by an AppUserNotification, triage, planner start and planner turns.
import { z } from 'zod';
import type { Logger } from '../core/logger.ts';
import type { LinearJob } from '../store/linear-jobs.ts';
import type { LinearApi } from './api/types.ts';
import type { LinearEffects } from './effects.ts';
import type { JobKind } from './jobs.ts';
import type { MentionResponder } from './mentions.ts';
import type { Planner } from './planner/planner.ts';
import type { ReplyTarget } from './reply.ts';
import { postReply } from './reply.ts';
import type { Triage } from './triage.ts';

const replyTarget = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('session'), agentSessionId: z.string(), issueId: z.string() }),
  z.object({ kind: z.literal('comment'), issueId: z.string(), parentId: z.string().optional() }),
]);

export const mentionJob = z.object({
  issueId: z.string(),
  commentId: z.string(),
  threadId: z.string(),
  body: z.string(),
  author: z.string().nullable(),
  profile: z.string().nullable(),
});
export const notificationMentionJob = z.object({
  issueId: z.string(),
  commentId: z.string(),
  body: z.string(),
  author: z.string().nullable(),
  /** issueCommentMention: the comment addresses the app; issueNewComment: it is only on an issue the app follows. */
  addressed: z.boolean(),
});
export const triageJob = z.object({ issueId: z.string(), identifier: z.string() });
export const planStartJob = z.object({
  issueId: z.string(),
  reply: replyTarget,
  agentSessionId: z.string().nullable(),
  author: z.string().nullable(),
});
export const planTurnJob = z.object({
  /** The planning issue; its planning session is looked up when the turn runs (it may start just before). */
  issueId: z.string(),
  text: z.string(),
  command: z.enum(['finalize', 'abandon', 'message']),
  reply: replyTarget,
  agentSessionId: z.string().nullable(),
  author: z.string().nullable(),
});

export type MentionJob = z.infer<typeof mentionJob>;
export type NotificationMentionJob = z.infer<typeof notificationMentionJob>;
export type TriageJob = z.infer<typeof triageJob>;
export type PlanStartJob = z.infer<typeof planStartJob>;
export type PlanTurnJob = z.infer<typeof planTurnJob>;

/** Job kind names. */
export const JOB = {
  mention: 'mention',
  notificationMention: 'notification-mention',
  triage: 'triage',
  planStart: 'plan-start',
  planTurn: 'plan-turn',
} as const;

export interface RouterJobDeps {
  api: LinearApi;
  /** Job effects on Linear are keyed `job:<job key>/<effect>` (a job run again after a crash does not repeat them). */
  effects: LinearEffects;
  planner: Planner;
  triage: Triage;
  mentions: MentionResponder;
  /** Routes a comment reported by an AppUserNotification (after its delay) as the Comment webhook would. */
  routeNotificationMention(job: NotificationMentionJob): Promise<void>;
  logger: Logger;
}

function payload<T>(schema: z.ZodType<T>, job: LinearJob): T {
  return schema.parse(job.payload);
}

/** The job kinds, wired to the services that do the work. */
export function routerJobKinds(deps: RouterJobDeps): Record<string, JobKind> {
  const { api, planner, triage, mentions, logger } = deps;
  // A job's last word is said at most once (a crash between saying it and recording the failure does not repeat it).
  const sayOnce = async (job: LinearJob, target: ReplyTarget, body: string): Promise<void> => {
    await deps.effects.run(`job:${job.key}/give-up`, 'at-most-once', () =>
      postReply(api, logger, target, body, 'error'),
    );
  };
  return {
    [JOB.mention]: {
      run: async (job, signal) =>
        void (await mentions.answer(payload(mentionJob, job), signal, deps.effects.scope(`job:${job.key}`))),
      giveUp: async (job, error) => {
        const p = payload(mentionJob, job);
        await sayOnce(
          job,
          { kind: 'comment', issueId: p.issueId, parentId: p.threadId },
          `**${p.profile ?? 'switchboard'}** could not answer: ${error}`,
        );
      },
    },
    [JOB.notificationMention]: {
      run: async (job) => deps.routeNotificationMention(payload(notificationMentionJob, job)),
      giveUp: async (job, error) => {
        const p = payload(notificationMentionJob, job);
        await sayOnce(
          job,
          { kind: 'comment', issueId: p.issueId, parentId: p.commentId },
          `I could not handle this mention: ${error}`,
        );
      },
    },
    [JOB.triage]: {
      run: async (job) =>
        void (await triage.run(payload(triageJob, job).issueId, deps.effects.scope(`job:${job.key}`))),
      giveUp: async (job, error) => {
        await sayOnce(
          job,
          { kind: 'comment', issueId: payload(triageJob, job).issueId },
          `Auto-triage failed: ${error}`,
        );
      },
    },
    [JOB.planStart]: {
      run: async (job) => {
        const p = payload(planStartJob, job);
        await planner.start(p.issueId, { reply: p.reply, agentSessionId: p.agentSessionId, author: p.author });
      },
      giveUp: async (job, error) =>
        sayOnce(job, payload(planStartJob, job).reply, `Could not start planning: ${error}`),
    },
    [JOB.planTurn]: {
      run: async (job, signal) => {
        const p = payload(planTurnJob, job);
        const session = await planner.activeForIssue(p.issueId);
        if (!session) {
          const text =
            'This issue is not being planned any more (the plan was approved or abandoned); say "plan this project" to plan again.';
          await deps.effects.run(`job:${job.key}/not-planning`, 'at-most-once', () =>
            postReply(api, logger, p.reply, text, 'response'),
          );
          return;
        }
        const result = await planner.turn(
          session.id,
          p.text,
          p.command,
          { reply: p.reply, agentSessionId: p.agentSessionId, author: p.author },
          signal,
        );
        if (result.outcome === 'stopped') throw new Error('the planning turn was stopped');
      },
      giveUp: async (job, error) =>
        sayOnce(
          job,
          payload(planTurnJob, job).reply,
          `This planning turn failed: ${error}. Send your message again to retry.`,
        ),
    },
  };
}

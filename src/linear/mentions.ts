// @mention routing: which agent profile a comment addresses, and answering it in the comment's thread, through the
// engine (a subagent turn with the profile's instructions and the issue's context) or one coding-agent turn in the
// issue's repository when the profile says so.
import { resolve } from 'node:path';
import type { CodeRunner } from '../coding/code-runner.ts';
import type { Config } from '../core/config.ts';
import type { AgentProfileConfig } from '../core/config-linear-agents.ts';
import { expandHome } from '../core/config-load.ts';
import { AppError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { EngineApi } from '../engine/api.ts';
import type { LinearApi, LinearIssue } from './api/types.ts';
import type { EffectScope } from './effects.ts';
import { UNLEDGERED } from './effects.ts';
import { sanitizePromptInput } from './pipeline/prompts.ts';
import { capReply } from './reply.ts';

/** The mention handles of a profile: its `mentionAliases`, else its name. */
export function profileAliases(name: string, profile: Pick<AgentProfileConfig, 'mentionAliases'>): string[] {
  return (profile.mentionAliases && profile.mentionAliases.length > 0 ? profile.mentionAliases : [name]).map((a) =>
    a.toLowerCase(),
  );
}

/** The first profile (in order of the comment's mentions) one of whose aliases is mentioned, or null. */
export function profileForMentions(
  mentions: readonly string[],
  profiles: Readonly<Record<string, AgentProfileConfig>>,
): string | null {
  for (const handle of mentions) {
    for (const [name, profile] of Object.entries(profiles))
      if (profileAliases(name, profile).includes(handle.toLowerCase())) return name;
  }
  return null;
}

/** What a mention job answers. */
export interface MentionRequest {
  issueId: string;
  commentId: string;
  /** The comment thread the answer goes into (the root comment). */
  threadId: string;
  body: string;
  author: string | null;
  /** The profile that answers; null: the default answerer (linear.mentions.defaultProfile, else a plain engine agent). */
  profile: string | null;
}

export interface MentionResponderDeps {
  api: LinearApi;
  config: Config;
  engine?: EngineApi;
  codeRunner?: CodeRunner;
  logger: Logger;
}

const DEFAULT_INSTRUCTIONS =
  'You are the switchboard assistant of a software team, answering a question asked in a Linear comment. Be concise and concrete.';

function recentComments(issue: LinearIssue, skipId: string, maxChars: number): string {
  const lines = issue.comments
    .filter((c) => c.id !== skipId)
    .map((c) => `- ${c.user?.name ?? 'someone'}: ${sanitizePromptInput(c.body, 600)}`);
  return sanitizePromptInput(lines.join('\n') || '(none)', maxChars);
}

/** `work`, or a rejection as soon as `signal` aborts (the work itself goes on; its result is dropped). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('stopped'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('stopped'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** Answers mentions; one per daemon. */
export class MentionResponder {
  #d: MentionResponderDeps;

  constructor(deps: MentionResponderDeps) {
    this.#d = deps;
  }

  /** The profile name and settings answering `request` (null name: the built-in default answerer). */
  profileFor(request: Pick<MentionRequest, 'profile'>): { name: string | null; profile: AgentProfileConfig | null } {
    const { linear } = this.#d.config;
    const name = request.profile ?? linear.mentions.defaultProfile ?? null;
    if (name === null) return { name: null, profile: null };
    const profile = linear.profiles[name];
    if (!profile) throw new AppError('invalid_input', `no agent profile "${name}" in linear.profiles`, 'profile');
    return { name, profile };
  }

  /** The prompt for the answering agent: its instructions, the issue, recent comments and the comment to answer. */
  prompt(issue: LinearIssue, request: MentionRequest, instructions: string): string {
    const max = this.#d.config.linear.pipeline.promptInputMaxChars;
    return [
      instructions.trim() || DEFAULT_INSTRUCTIONS,
      '',
      `You were mentioned in a comment on the Linear issue ${issue.identifier} "${issue.title}" (${issue.url}).`,
      `Team ${issue.team.name}${issue.project ? `, project ${issue.project.name}` : ''}; state ${issue.state?.name ?? 'unknown'}.`,
      '',
      '## The issue',
      sanitizePromptInput(issue.description.trim() || '(no description)', max),
      '',
      '## Recent comments',
      recentComments(issue, request.commentId, max),
      '',
      `## The comment to answer${request.author ? ` (by ${request.author})` : ''}`,
      sanitizePromptInput(request.body, max),
      '',
      'Answer that comment. Your answer is posted as a reply in its thread, so write only the answer.',
    ].join('\n');
  }

  /**
   * Answers a mention: asks the profile's agent and posts the answer as a reply in the comment's thread. Throws when
   * the agent cannot answer (no engine, timeout, a failed coding turn is answered with its error instead).
   */
  async answer(
    request: MentionRequest,
    signal: AbortSignal,
    effects: EffectScope = UNLEDGERED,
  ): Promise<{ commentId: string; text: string }> {
    const { api, config, engine, codeRunner, logger } = this.#d;
    const { name, profile } = this.profileFor(request);
    const issue = await api.getIssue(request.issueId);
    const prompt = this.prompt(issue, request, profile?.instructions ?? '');
    const timeoutSec = profile?.timeoutSec ?? 600;
    let text: string;
    if (profile?.answerWith === 'coding') {
      if (!codeRunner) throw new AppError('unavailable', 'coding sessions are not available to answer mentions');
      const pc = config.linear.pipeline;
      const repo = pc.teamRepos[issue.team.key] ?? pc.repo ?? config.defaultWorkdir;
      const result = await codeRunner.run(
        {
          prompt,
          ...(repo ? { workdir: resolve(expandHome(repo)) } : {}),
          permissionMode: profile.permissionMode,
          timeoutSec,
          inactivitySec: profile.inactivitySec,
          originChannel: pc.originChannel,
          ...(name ? { profile: name } : {}),
        },
        signal,
      );
      if (signal.aborted) throw new Error('stopped');
      text = result.success
        ? result.output.trim()
        : `I could not finish (${result.error}${result.detail ? `: ${result.detail}` : ''}).${result.output.trim() ? `\n\n${result.output.trim()}` : ''}`;
    } else {
      if (!engine)
        throw new AppError('unavailable', 'the agent engine is not running, so nobody can answer this mention');
      const reply = await untilAborted(
        engine.askAgent({ prompt, name: name ?? 'linear', timeoutMs: Math.round(timeoutSec * 1000) }),
        signal,
      );
      text = reply.text.trim();
    }
    const body = capReply(
      `**${name ?? 'switchboard'}**: ${text || '(no answer)'}`,
      config.linear.mentions.maxReplyChars,
    );
    // Keyed: a job run again after a crash does not answer twice.
    const posted = await effects.run('answer', 'keyed', (id) =>
      api.createComment(request.issueId, body, { parentId: request.threadId, ...(id ? { id } : {}) }),
    );
    logger.info({ issue: issue.identifier, profile: name, comment: request.commentId }, 'linear mention answered');
    return { commentId: posted.kind === 'sent' ? posted.value.id : 'already-posted', text: body };
  }
}

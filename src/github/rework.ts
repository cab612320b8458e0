// The review loop and mentions. A `changes_requested` review (or a review comment) on a pull request a session opened
// gives that session a rework turn; when the turn ends, what changed is committed and pushed onto the PR's branch
// (session_pr's path) and the PR is answered. An `@<mentionName>` comment launches a session in the workspace that
// holds the repository and answers in the thread when it ends. Each review, comment and mention is keyed in
// `github_reworks` (acted on once across redeliveries), and each answer carries a hidden marker looked up first.
import type { SessionSignal } from '../coding/session.ts';
import type { SessionManager } from '../coding/session-manager.ts';
import type { Clock } from '../core/clock.ts';
import type { GithubConfig } from '../core/config-github.ts';
import { errorMessage } from '../core/errors.ts';
import { faultPoint } from '../core/fault.ts';
import type { Logger } from '../core/logger.ts';
import type { SessionPullRequestStore } from '../store/github-pull-requests.ts';
import type { GithubRework, GithubReworkStore } from '../store/github-reworks.ts';
import type { GithubApi } from './client.ts';
import type { GitRunner } from './git.ts';
import { workspaceOf } from './mentions.ts';
import type { SessionPullRequests } from './pull-requests.ts';
import { parseRepoName } from './remote.ts';
import { answerOf } from './rework-answer.ts';
import type { GithubThreadsApi } from './rework-api.ts';
import { answerMarker, mentionPrompt, mentions, reworkPrompt } from './rework-prompt.ts';
import type { GithubEvent } from './webhooks/events.ts';

/** The `author_association`s trusted when `github.allowedUsers` is empty: people with access to the repository. */
const TRUSTED = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);

/** The SessionManager calls the loop makes. */
export type ReworkSessions = Pick<
  SessionManager,
  'on' | 'get' | 'liveById' | 'resume' | 'send' | 'launchSoon' | 'outputBlocks'
>;

/** What the loop needs. */
export interface GithubReworkDeps {
  config: GithubConfig;
  workspaces: readonly string[];
  api: GithubApi;
  threads: GithubThreadsApi;
  pullRequests: SessionPullRequests;
  prStore: SessionPullRequestStore;
  store: GithubReworkStore;
  sessions: ReworkSessions;
  git: GitRunner;
  clock: Clock;
  logger: Logger;
  pageBase: () => string | undefined;
}

/** The review loop and mentions: `handle` is the webhook worker's handler; `start` after the sessions are restored. */
export class GithubReviewLoop {
  readonly #d: GithubReworkDeps;
  #unsubscribe: (() => void) | undefined;
  readonly #finishing = new Set<string>();
  readonly #background = new Set<Promise<void>>();

  constructor(deps: GithubReworkDeps) {
    this.#d = deps;
  }

  /** Follows session ends, and carries on what a restart cut off (turns started again, answers owed posted). */
  async start(): Promise<void> {
    this.#unsubscribe ??= this.#d.sessions.on((signal) => this.#onSignal(signal));
    for (const row of await this.#d.store.inStates(['queued', 'running', 'finishing']))
      await this.#resumeRow(row).catch((error: unknown) => this.#failed(row, error));
  }

  /**
   * A row a restart found unfinished: an answer owed is posted; a turn that ended is answered; a turn a restart
   * interrupted runs again (the turn at least once, the answer once); one that failed or was killed is answered so.
   */
  async #resumeRow(row: GithubRework): Promise<void> {
    if (row.state === 'finishing') return this.#finishSoon(row);
    if (row.state === 'queued' || !row.sessionId) {
      await this.#begin(row);
      return;
    }
    if (this.#d.sessions.liveById(row.sessionId)?.isActive) return;
    const record = await this.#d.sessions.get(row.sessionId);
    if (record.status === 'interrupted') {
      await this.#begin(row);
      return;
    }
    const error = record.status === 'completed' ? undefined : `the session ${record.status}`;
    await this.#d.store.set(row.key, { state: 'finishing', ...(error ? { error } : {}) }, this.#d.clock.now());
    this.#finishSoon({ ...row, state: 'finishing', error: error ?? null });
  }

  /** Stops following sessions; resolves once answers in flight are posted (or failed). */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    await Promise.all([...this.#background]);
  }

  /** The webhook handler: acts on a review, review comment or mention; resolves what became of the event. */
  async handle(event: GithubEvent): Promise<string> {
    switch (event.kind) {
      case 'review':
        if (event.action !== 'submitted' || event.state.toLowerCase() !== 'changes_requested')
          return `ignored: review ${event.action} ${event.state}`;
        return this.#rework(event, `review:${event.id}`, event.id, event.body);
      case 'reviewComment':
        if (event.action !== 'created') return `ignored: review comment ${event.action}`;
        return this.#rework(
          event,
          event.reviewId === null ? `comment:${event.id}` : `review:${event.reviewId}`,
          event.reviewId,
          '',
        );
      case 'issueComment':
        return this.#mention(event);
      case 'other':
        return `ignored: ${event.event}`;
    }
  }

  /**
   * Why the author may not steer switchboard (null: they may): a bot never; with `github.allowedUsers`, only its
   * logins; without, only the repository's owner, organization members and collaborators (`author_association`).
   */
  #allowed(event: { author: string | null; bot: boolean; association: string | null }): string | null {
    const { author } = event;
    if (event.bot || author === null) return `ignored: by ${author ?? 'nobody'} (a bot)`;
    const allowed = this.#d.config.allowedUsers;
    if (allowed.length > 0)
      return allowed.some((u) => u.toLowerCase() === author.toLowerCase())
        ? null
        : `ignored: ${author} is not in github.allowedUsers`;
    return TRUSTED.has(event.association ?? '')
      ? null
      : `ignored: ${author} is ${event.association ?? 'unknown'}, not a collaborator`;
  }

  async #rework(
    event: Extract<GithubEvent, { kind: 'review' | 'reviewComment' }>,
    key: string,
    reviewId: number | null,
    reviewBody: string,
  ): Promise<string> {
    const refused = this.#allowed(event);
    if (refused) return refused;
    const pr = await this.#d.prStore.findByPull(event.repo, event.pull);
    if (!pr) return `ignored: ${event.repo}#${event.pull} was not opened by switchboard`;
    const known = await this.#d.store.get(key);
    if (known) return this.#again(known);
    const repo = parseRepoName(pr.repo);
    if (!repo) throw new Error(`session_pull_requests holds a bad repository name: ${pr.repo}`);
    const comments =
      reviewId !== null
        ? await this.#d.threads.reviewComments(repo, event.pull, reviewId)
        : event.kind === 'reviewComment'
          ? [{ id: event.id, path: event.path, line: event.line, body: event.body }]
          : [];
    const prompt = reworkPrompt({ pull: event.pull, author: event.author, reviewBody, comments });
    const { record } = await this.#d.store.claim({
      key,
      kind: 'rework',
      repo: pr.repo,
      number: event.pull,
      sessionId: pr.sessionId,
      prompt,
      now: this.#d.clock.now(),
    });
    return this.#again(record);
  }

  async #mention(event: Extract<GithubEvent, { kind: 'issueComment' }>): Promise<string> {
    const name = this.#d.config.mentionName;
    if (event.action !== 'created' || !mentions(event.body, name)) return `ignored: comment ${event.action}`;
    const refused = this.#allowed(event);
    if (refused) return refused;
    const key = `mention:${event.id}`;
    const known = await this.#d.store.get(key);
    if (known) return this.#again(known);
    const prompt = mentionPrompt({ ...event, name, comment: event.body });
    const { record } = await this.#d.store.claim({
      key,
      kind: 'mention',
      repo: event.repo,
      number: event.issue,
      sessionId: null,
      prompt,
      now: this.#d.clock.now(),
    });
    return this.#again(record);
  }

  /** A row met again (first time, a redelivery or a retry after a crash): starts it only when nothing did. */
  async #again(row: GithubRework): Promise<string> {
    if (row.state !== 'queued') return `${row.key}: already ${row.state}`;
    return this.#begin(row);
  }

  /** Starts the row's turn: a mention launches a session, a rework resumes (or sends to) the PR's session. */
  async #begin(row: GithubRework): Promise<string> {
    const { sessions, store, clock } = this.#d;
    if (row.kind === 'mention') {
      const workdir = await workspaceOf(row.repo, {
        workspaces: this.#d.workspaces,
        remote: this.#d.config.remote,
        configured: this.#d.config.repo,
        git: this.#d.git,
      });
      if (!workdir) {
        await store.set(
          row.key,
          { state: 'finishing', error: `no workspace holds a clone of ${row.repo}` },
          clock.now(),
        );
        this.#finishSoon({ ...row, state: 'finishing', error: `no workspace holds a clone of ${row.repo}` });
        return `${row.key}: no workspace holds ${row.repo}`;
      }
      const session = await sessions.launchSoon(
        { prompt: row.prompt, workdir, originChannel: 'github' },
        // Stored with the session, in its transaction: a retry after a crash finds the row running, never launches twice.
        { onStored: (record, trx) => store.set(row.key, { state: 'running', sessionId: record.id }, clock.now(), trx) },
      );
      return `${row.key}: launched session ${session.name}`;
    }
    if (!row.sessionId) throw new Error(`${row.key} has no session`);
    const live = sessions.liveById(row.sessionId);
    // `running` before the message goes: the turn it starts can end before the send resolves (the send waits for its
    // record to be durable), and the end is noted only from `running`. A crash before the send finds the row running
    // with its session interrupted, and sends again (the turn at least once).
    await store.set(row.key, { state: 'running' }, clock.now());
    if (live?.isActive) await sessions.send(row.sessionId, row.prompt, { source: 'user', via: 'github' });
    else await sessions.resume(row.sessionId, { prompt: row.prompt, via: 'github' });
    return `${row.key}: rework turn started in ${live?.name ?? row.sessionId}`;
  }

  #onSignal(signal: SessionSignal): void {
    const turnEnded =
      (signal.type === 'waiting' && (signal.reason === 'turn-end' || signal.reason === 'question')) ||
      signal.type === 'ended';
    if (!turnEnded) return;
    const sessionId = signal.session.id;
    const failed = signal.type === 'ended' && signal.session.record.status !== 'completed';
    this.#track(
      (async () => {
        for (const row of await this.#d.store.ofSession(sessionId, ['running'])) {
          const error = failed
            ? `the session ${signal.session.record.status}: ${signal.session.record.error ?? ''}`
            : undefined;
          // Only from `running`: a second end signal of the same turn (waiting, then ended) finds it moved on.
          const moved = await this.#d.store.advance(
            row.key,
            'running',
            {
              state: 'finishing',
              ...(error ? { error } : {}),
            },
            this.#d.clock.now(),
          );
          if (moved) this.#finishSoon({ ...row, state: 'finishing', error: error ?? null });
        }
      })(),
      `github: could not note the end of session ${sessionId}`,
    );
  }

  #track(work: Promise<void>, what: string): void {
    const tracked = work.catch((error: unknown) => this.#d.logger.error({ err: errorMessage(error) }, what));
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  /** Answers the row in the background; a failure is logged and the row stays `finishing` (the next start retries). */
  #finishSoon(row: GithubRework): void {
    if (this.#finishing.has(row.key)) return;
    this.#finishing.add(row.key);
    this.#track(
      this.#finish(row).finally(() => this.#finishing.delete(row.key)),
      `github: could not push or answer ${row.key}; retried at the next start`,
    );
  }

  async #failed(row: GithubRework, error: unknown): Promise<void> {
    this.#d.logger.warn({ key: row.key, err: errorMessage(error) }, 'github: rework or mention failed');
    await this.#d.store.set(row.key, { state: 'failed', error: errorMessage(error) }, this.#d.clock.now());
  }

  /** Pushes (a rework), then answers once: a comment carrying the row's marker is looked up before one is posted. */
  async #finish(row: GithubRework): Promise<void> {
    const repo = parseRepoName(row.repo);
    if (!repo) throw new Error(`bad repository name ${row.repo}`);
    const body = await answerOf(row, this.#d);
    const marker = answerMarker(row.key);
    const posted = (await this.#d.threads.issueComments(repo, row.number)).find((c) => c.body.includes(marker));
    const answerId = posted?.id ?? (await this.#d.threads.createIssueComment(repo, row.number, body));
    faultPoint('github.rework.after-comment');
    await this.#d.store.set(row.key, { state: row.error ? 'failed' : 'done', answerId }, this.#d.clock.now());
    this.#d.logger.info({ key: row.key, repo: row.repo, number: row.number }, 'github: answered');
  }
}

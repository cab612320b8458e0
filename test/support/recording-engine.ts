import type { InboundMessage } from '../../src/channels/connector.ts';
import type { Accepted, EngineApi, MessageRoute, PostOptions, SessionDescriptor } from '../../src/engine/api.ts';

/** One message the fake engine accepted (or acknowledged as a duplicate). */
export interface RecordedPost {
  via: 'scheduled' | 'system' | 'user';
  sessionId: string;
  descriptor: SessionDescriptor;
  text: string;
  origin: string;
  messageId: string;
  duplicate: boolean;
}

interface FakeSession {
  id: string;
  descriptor: SessionDescriptor;
  /** Time of the last person's message (user sessions), for most-recent-foreground. */
  lastUserAt: number;
  accepted: Set<string>;
}

/**
 * A recording EngineApi for tests of the scheduler, wakes and hooks. It keeps sessions and accepted message ids the way
 * the engine's durable inbox does (one instance outlives a simulated scheduler crash, like the engine's files), resolves
 * routes with the seed's two strategies, and can hold a post to simulate a crash around it.
 */
export class RecordingEngine implements EngineApi {
  readonly posts: RecordedPost[] = [];
  /** postSystemMessage calls whose route found no session. */
  readonly unrouted: { route: MessageRoute; text: string; origin: string }[] = [];
  /**
   * `after-accept`: the next posts are accepted (recorded) but never resolve, as if the daemon died right after the
   * engine wrote them; `before-accept`: never resolve and record nothing (died before the write).
   */
  get hold(): 'none' | 'before-accept' | 'after-accept' {
    return this.#hold;
  }
  set hold(hold: 'none' | 'before-accept' | 'after-accept') {
    this.#hold = hold;
    this.#heldUnderHold = false;
  }
  #hold: 'none' | 'before-accept' | 'after-accept' = 'none';
  /** Whether a post was held since `hold` was last set, and who waits for one (see whenHeld). */
  #heldUnderHold = false;
  #heldWaiters: (() => void)[] = [];
  /** When set, posts reject with it (the engine refusing). */
  failWith: Error | null = null;
  /** Called (and awaited) inside each post before it is accepted (to look at the caller's state at that moment). */
  onPost: ((post: { descriptor: SessionDescriptor; text: string; messageId: string }) => void | Promise<void>) | null =
    null;
  #sessions = new Map<string, FakeSession>();
  #seq = 0;

  /** Adds a user (foreground) session whose person last spoke at `lastUserAt`. */
  addUserSession(id: string, lastUserAt: number): FakeSession {
    const session: FakeSession = {
      id,
      descriptor: { type: 'user', connector: 'web', userId: id, channelId: `web|${id}` },
      lastUserAt,
      accepted: new Set(),
    };
    this.#sessions.set(id, session);
    return session;
  }

  /** Adds a session of any descriptor (e.g. an existing heartbeat or subagent session). */
  addSession(id: string, descriptor: SessionDescriptor): FakeSession {
    const session: FakeSession = { id, descriptor, lastUserAt: 0, accepted: new Set() };
    this.#sessions.set(id, session);
    return session;
  }

  removeSession(id: string): void {
    this.#sessions.delete(id);
  }

  /**
   * Resolves once a post is held (never resolving, as `hold` says) since `hold` was last set; at once if one already
   * was. A test's clock waits for this or for the caller to be idle, whichever comes first.
   */
  whenHeld(): Promise<void> {
    if (this.#heldUnderHold) return Promise.resolve();
    return new Promise<void>((resolve) => this.#heldWaiters.push(resolve));
  }

  /** Never resolves: the post is held (see `hold`); tells whenHeld's waiters. */
  #held(): Promise<Accepted> {
    this.#heldUnderHold = true;
    for (const wake of this.#heldWaiters.splice(0)) wake();
    return new Promise<Accepted>(() => undefined);
  }

  /** Accepted, non-duplicate posts (what actually makes the engine run a turn). */
  get runs(): RecordedPost[] {
    return this.posts.filter((p) => !p.duplicate);
  }

  async acceptUserMessage(message: InboundMessage): Promise<Accepted> {
    const id = `user-${message.target.channel}-${message.target.chat}`;
    let session = this.#sessions.get(id);
    if (!session) {
      session = this.addUserSession(id, 0);
    }
    session.lastUserAt = message.receivedAt;
    return this.#accept(session, 'user', message.text, `${message.target.channel}|${message.target.chat}`, message.id);
  }

  async postSystemMessage(
    route: MessageRoute,
    text: string,
    origin: string,
    options?: PostOptions,
  ): Promise<Accepted | null> {
    const session = this.#resolve(route);
    if (!session) {
      if (this.failWith) throw this.failWith;
      this.unrouted.push({ route, text, origin });
      return null;
    }
    return this.#accept(session, 'system', text, origin, options?.messageId);
  }

  async postScheduled(
    descriptor: { type: 'cron'; id: string } | { type: 'heartbeat' },
    text: string,
    origin: string,
    options?: PostOptions,
  ): Promise<Accepted> {
    const id = descriptor.type === 'cron' ? `cron-${descriptor.id}` : 'heartbeat';
    let session = this.#sessions.get(id);
    if (!session) {
      session = this.addSession(id, descriptor);
    }
    return this.#accept(session, 'scheduled', text, origin, options?.messageId);
  }

  async startBackgroundAgent(input: {
    prompt: string;
    name: string;
    parentSessionId?: string;
  }): Promise<{ sessionId: string }> {
    const id = `sub-${++this.#seq}`;
    const session = this.addSession(id, {
      type: 'subagent',
      id,
      parentSessionId: input.parentSessionId ?? 'none',
      name: input.name,
    });
    await this.#accept(session, 'system', input.prompt, 'start', undefined);
    return { sessionId: id };
  }

  async askAgent(): Promise<{ sessionId: string; text: string }> {
    throw new Error('the recording engine runs no agent turns, so askAgent has no reply to give');
  }

  #resolve(route: MessageRoute): FakeSession | null {
    if ('sessionId' in route) return this.#sessions.get(route.sessionId) ?? null;
    for (const strategy of route.strategies) {
      const candidates = [...this.#sessions.values()].filter(
        (s) => s.descriptor.type === (strategy === 'heartbeat' ? 'heartbeat' : 'user'),
      );
      const best = candidates.sort((a, b) => b.lastUserAt - a.lastUserAt)[0];
      if (best) return best;
    }
    return null;
  }

  async #accept(
    session: FakeSession,
    via: RecordedPost['via'],
    text: string,
    origin: string,
    messageId: string | undefined,
  ): Promise<Accepted> {
    if (this.failWith) throw this.failWith;
    const id = messageId ?? `m-${++this.#seq}`;
    await this.onPost?.({ descriptor: session.descriptor, text, messageId: id });
    if (this.hold === 'before-accept') return this.#held();
    const duplicate = session.accepted.has(id);
    session.accepted.add(id);
    this.posts.push({
      via,
      sessionId: session.id,
      descriptor: session.descriptor,
      text,
      origin,
      messageId: id,
      duplicate,
    });
    if (this.hold === 'after-accept') return this.#held();
    return { sessionId: session.id, messageId: id, duplicate };
  }
}

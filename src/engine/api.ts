// What the rest of the daemon may ask of the agent engine (operations, the wake hook, Linear's spawn_agent and
// ask_agent). engine/ implements it; callers above engine/ depend on this interface only.
import type { InboundMessage } from '../channels/connector.ts';

/** The session types of the engine seed, written once in the session's first log record and never re-derived. */
export type SessionDescriptor =
  | { type: 'user'; connector: string; userId: string; channelId: string }
  | { type: 'cron'; id: string }
  | { type: 'heartbeat' }
  | { type: 'subagent'; id: string; parentSessionId: string; name: string };

/** The two fetch strategies of the seed. */
export type SessionFetchStrategy = 'most-recent-foreground' | 'heartbeat';

/** Where a system message goes: a session by id, or the first session a strategy finds (tried in order). */
export type MessageRoute = { sessionId: string } | { strategies: SessionFetchStrategy[] };

/** A durably accepted message: which session's inbox holds it, under which id. */
export interface Accepted {
  sessionId: string;
  messageId: string;
  /** True when this message id was already accepted before (a redelivery); nothing new was queued. */
  duplicate: boolean;
}

/**
 * Options of a system or scheduled post. `messageId` is a caller-chosen id (unique per message): a repeat of an id the
 * target session already accepted is acknowledged with `duplicate: true` and not queued again, so a caller that
 * crashed between posting and recording can post again without a second run.
 */
export interface PostOptions {
  messageId?: string;
}

/** The engine as the rest of the daemon sees it. */
export interface EngineApi {
  /**
   * Durably accepts a person's chat message into the inbox of its user session (created on first contact). Resolves
   * once the message is on disk; the turn runs later. Deduplicates by the connector's message id.
   */
  acceptUserMessage(message: InboundMessage): Promise<Accepted>;
  /**
   * Durably posts a system message (`origin` says who sends it: `wake`, `hook`, `subagent:<name>`, …) to the routed
   * session. Resolves to null when the route finds no session (the caller logs and counts it; nothing is dropped
   * silently).
   */
  postSystemMessage(route: MessageRoute, text: string, origin: string, options?: PostOptions): Promise<Accepted | null>;
  /**
   * Durably posts a scheduled run's prompt to the cron session of task `id` or to the heartbeat session (creating the
   * session on first use). The scheduler calls this before it records the run as done.
   */
  postScheduled(
    descriptor: { type: 'cron'; id: string } | { type: 'heartbeat' },
    text: string,
    origin: string,
    options?: PostOptions,
  ): Promise<Accepted>;
  /** Starts a subagent session with `prompt` as its first message; returns at once. */
  startBackgroundAgent(input: {
    prompt: string;
    name: string;
    parentSessionId?: string;
  }): Promise<{ sessionId: string }>;
  /** Starts a subagent and resolves with the text of its first reply (rejects after `timeoutMs`). */
  askAgent(input: {
    prompt: string;
    name: string;
    parentSessionId?: string;
    timeoutMs?: number;
  }): Promise<{ sessionId: string; text: string }>;
}

/** One engine session as listings show it. */
export interface EngineSessionSummary {
  id: string;
  descriptor: SessionDescriptor;
  /** `running` while a turn runs. */
  state: 'idle' | 'running';
  /** Messages accepted and waiting for their turn. */
  queued: number;
  createdAt: number;
  /** Time of the last record written (or read back on restore). */
  updatedAt: number;
  /** Time of the last message from a person (user sessions). */
  lastUserAt: number | null;
  /** How the last turn ended. */
  lastOutcome: 'ok' | 'error' | 'limit' | 'internal_error' | null;
}

/** The engine as operations (agents listing, RPC, CLI, agent tools) see it: the contract plus listings and session-to-session messages. */
export interface EngineControl extends EngineApi {
  /** Every engine session this process's engine holds, most recently updated first (empty where it does not run). */
  listSessions(): EngineSessionSummary[];
  /**
   * Every engine session, most recently updated first, on any node of a cluster: the local engine's list where it runs,
   * else the list of the node that serves it (asked through `engine_calls`). Rejects `unavailable` when no node answers.
   */
  sessions(): Promise<EngineSessionSummary[]>;
  /**
   * Durably posts `text` from engine session `fromId` (origin: its own, e.g. `subagent:<name>`) to `targetId`, or when
   * absent to its parent (subagents) or the most recent foreground session (others). Throws AppError (not_found,
   * invalid_input) when there is no such session or it would message itself.
   */
  sendFromSession(fromId: string, text: string, targetId?: string): Promise<Accepted>;
}

import type { z } from 'zod';
import type { ApprovalDesk } from '../approvals/desk.ts';
import type { OutboundMessage } from '../channels/connector.ts';
import type { ClusterSessions } from '../cluster/cluster-sessions.ts';
import type { ClusterView } from '../cluster/node-listing.ts';
import type { CodeRunner } from '../coding/code-runner.ts';
import type { SessionManager } from '../coding/session-manager.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { EngineControl } from '../engine/api.ts';
import type { Scheduler } from '../engine/scheduler/scheduler.ts';
import type { WakeRouter } from '../engine/wake/wake-router.ts';
import type { GithubIntegration } from '../github/integration.ts';
import type { LinearServices } from '../linear/integration.ts';
import type { Idempotency, KeyCommit } from './idempotency.ts';
import { servicesFor } from './needs.ts';

/** Who is calling an operation; origin channels and user-vs-agent rules resolve from this the same way everywhere. */
export type Caller =
  /** An engine (orchestrator) session calling a tool; `channel` is the chat it serves, if any. */
  | { kind: 'agent'; sessionId: string; channel?: string }
  /** A person typing a command in a chat channel (`channel|target` or `channel|account|target`). */
  | { kind: 'chat'; channel: string; userId: string }
  /** A JSON-RPC call; `web` when the built-in web page made it (its cookie, not the bearer token). */
  | { kind: 'rpc'; web?: boolean }
  | { kind: 'cli' };

/** The services every daemon has: an operation may use these without declaring them. */
export interface CoreServices {
  config: Config;
  sessions: SessionManager;
  /** Where operations read "now" (listings' ages); the daemon's one clock. */
  clock: Clock;
}

/**
 * The services a daemon may run without (by configuration, or in a test): an operation that uses one declares it in
 * `needs`, and the surfaces check it once (operations/needs.ts) before the operation runs.
 */
export interface OptionalServices {
  /** The agent engine (agents, agent-send, agent-start, spawn_agent, ask_agent). */
  engine: EngineControl;
  /** Cron tasks and the heartbeat (cron_*, heartbeat_*, scheduler_status). */
  scheduler: Scheduler;
  /** Wake counters for scheduler_status (shown as absent without it, never required). */
  wake: Pick<WakeRouter, 'stats'>;
  /** The Linear integration (linear_dispatches); absent when `linear.enabled` is false. */
  linear: LinearServices;
  /** The backend of code_run (one coding turn with a watchdog). */
  codeRunner: Pick<CodeRunner, 'run'>;
  /** Durable idempotency keys for RPC methods of operations marked `idempotent`; absent: such keys are refused. */
  idempotency: Idempotency;
  /** Approval requests and rules (approvals, approve, deny, approval_rules, approval_rule_remove). */
  approvals: ApprovalDesk;
  /** The GitHub integration (session_pr); absent when `github.enabled` is false. */
  github: Pick<GithubIntegration, 'pullRequests' | 'pageBase'>;
  /** The cluster as this node sees it (nodes); every daemon has one, SQLite ones being a cluster of one. */
  cluster: ClusterView;
  /** Sessions across the nodes (PostgreSQL): the launch queue and commands for sessions on other nodes. */
  clusterSessions: ClusterSessions;
}

/** The name of a service a daemon may run without. */
export type ServiceName = keyof OptionalServices;

/** The services operations act on; built whole, once, in src/main.ts. */
export type OperationServices = CoreServices & Partial<OptionalServices>;

/** The services as an operation that declared `needs: N` sees them: those it needs are present. */
export type ServicesWith<N extends ServiceName> = OperationServices & Pick<OptionalServices, N>;

/** What an operation runs with; `N` are the services it declared in `needs`. */
export interface OperationContext<N extends ServiceName = never> {
  caller: Caller;
  services: ServicesWith<N>;
  /**
   * Present when the request carries an idempotency key: an `idempotent` operation commits its answer with this
   * inside the transaction of its effect, so a crash between the two cannot run it twice.
   */
  idempotency?: KeyCommit;
  /**
   * The node that forwarded this request here (its session runs on this node, see operations/remote.ts); a forwarded
   * request is never forwarded again.
   */
  routedFrom?: string;
  /** Aborts when the call is given up (the engine turn that called the tool stopped); long operations stop on it. */
  signal?: AbortSignal;
}

/** How a chat command maps its words onto the input: leading positional names; the last takes the rest of the line. */
export interface CommandSpec {
  name: string;
  positional: string[];
  usage: string;
}

/** A CLI flag that sets an input key to a fixed value (e.g. `--disabled` → `enabled: false`). */
export interface CliSwitch {
  key: string;
  value: boolean | string;
  description: string;
}

/** How the CLI subcommand looks: its name and positional arguments (`<required>` / `[optional]`). */
export interface CliSpec {
  /** The subcommand; two words (`approvals rules`) make it a subcommand of the first. */
  name: string;
  args: string[];
  /** Input keys the CLI does not offer as options. */
  hide?: string[];
  /**
   * Extra flags by camel-case name (offered kebab-case), each setting an input key to a fixed value: how the CLI turns
   * off a boolean that is on by default, which a bare `--<key>` flag cannot express (hide the key itself).
   */
  switches?: Record<string, CliSwitch>;
  /** Flag names (camel-case, offered kebab-case) of input keys whose flag differs from the key (`labels` → `--label`). */
  flags?: Record<string, string>;
}

/** A seed-compatible RPC method (`claude-code.*`) for an operation: its name and how the operation's result `T` is reshaped. */
export interface LegacyRpc<T> {
  method: string;
  shape(result: T): Record<string, unknown>;
}

/** Where an operation with result `T` is exposed; each surface is generated from this, never written by hand. */
export interface Exposure<T = unknown> {
  tool?: string;
  command?: CommandSpec;
  rpc?: string;
  /** Also answered under the seed's method name, in the seed's response shape (operations/legacy-rpc.ts). */
  legacyRpc?: LegacyRpc<T>;
  cli?: CliSpec;
}

/**
 * Where the CLI's `--follow` starts after an operation's result: a session's live log from record `from`, nothing to
 * show (the session ended, or waits for input: `waitingFor` names what it waits on), or nothing to follow at all.
 */
export type FollowStart =
  | { kind: 'session'; session: { id: string; name: string }; from: number }
  | { kind: 'idle'; session: { id: string; name: string }; waitingFor: string | null }
  | { kind: 'none' };

/**
 * What a chat command answers: a text, and possibly a file (a session's patch) that the outbox sends as a document
 * where the chat takes files, and as the file's `inline` form (or the text and the content in a code fence) elsewhere.
 */
export type ChatReply = Pick<OutboundMessage, 'text' | 'file'>;

/** One user-facing operation: defined once, exposed as tool, chat command, RPC method and CLI subcommand. */
export interface Operation<S extends z.ZodObject = z.ZodObject, T = unknown> {
  name: string;
  summary: string;
  input: S;
  /** Alternative input key names accepted everywhere (e.g. `id` for `session`). */
  aliases?: Record<string, string>;
  expose: Exposure<T>;
  /**
   * The optional services it cannot run without. Each surface checks them once (operations/needs.ts): RPC, chat and
   * CLI answer an `unavailable` error naming what is missing, and the engine's toolbox does not offer the tool.
   */
  needs?: readonly ServiceName[];
  /**
   * Accepts an `idempotencyKey` over RPC (a repeat answers the first answer). Only for operations whose effect commits
   * its answer through `ctx.idempotency` in the effect's own transaction.
   */
  idempotent?: boolean;
  /** Runs it; answers an `unavailable` error naming the first service in `needs` that is missing (see defineOperation). */
  run(ctx: OperationContext, input: z.output<S>): Promise<T>;
  /** Renders the result for people and models (chat replies, tool results, CLI output). */
  format(result: T): string;
  /** The chat command's answer when it is more than `format`'s text (a file with it); absent: `format`'s text. */
  chatReply?(result: T): ChatReply;
  /** Present for operations whose session can be followed: the CLI offers `--follow` and starts where this says. */
  follow?(result: T): FollowStart;
  /**
   * Whether the orchestrator is offered the tool in this daemon (default: yes). For operations an agent may not run
   * by configuration (deciding approvals without `approvals.agentMayDecide`); `run` still refuses such a call itself.
   */
  offeredToAgent?(config: Config): boolean;
}

/** An operation as written: its `run` sees the services it declared in `needs` as present. */
export interface OperationDefinition<S extends z.ZodObject, T, N extends ServiceName> extends Omit<
  Operation<S, T>,
  'needs' | 'run'
> {
  needs?: readonly N[];
  run(ctx: OperationContext<N>, input: z.output<S>): Promise<T>;
}

/**
 * Builds an operation from its definition, keeping its input and result types tied together. The `run` it gives
 * checks the declared `needs` once, for every surface, before the definition's `run` (operations/needs.ts).
 */
export function defineOperation<S extends z.ZodObject, T, N extends ServiceName = never>(
  definition: OperationDefinition<S, T, N>,
): Operation<S, T> {
  return {
    ...definition,
    run: (ctx, input) => definition.run({ ...ctx, services: servicesFor(definition.needs ?? [], ctx.services) }, input),
  };
}

/**
 * The chat a person typed this command in, if any: it already shows the command's reply, so the session's
 * notifications skip repeating it there (passed to the SessionManager as `via`).
 */
export function commandChannel(caller: Caller): { via?: string } {
  return caller.kind === 'chat' ? { via: caller.channel } : {};
}

/** The channel the caller speaks from, if any. */
export function callerChannel(caller: Caller): string | undefined {
  if (caller.kind === 'chat') return caller.channel;
  if (caller.kind === 'agent') return caller.channel;
  return undefined;
}

/**
 * Who decides when `caller` decides an approval, as `Approval.decidedBy` names it: `<channel>|<user>` for a chat user
 * (`telegram|42`), `web` for the web page, `rpc`, `cli`, or `agent:<session>` for the orchestrator.
 */
export function deciderOf(caller: Caller): string {
  switch (caller.kind) {
    case 'chat': {
      const channel = caller.channel.split('|')[0] ?? caller.channel;
      return channel === 'web' ? 'web' : `${channel}|${caller.userId}`;
    }
    case 'agent':
      return `agent:${caller.sessionId}`;
    case 'rpc':
      return caller.web ? 'web' : 'rpc';
    case 'cli':
      return 'cli';
    default:
      caller satisfies never;
      return 'unknown';
  }
}

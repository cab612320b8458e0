// The integrations a config enables: GitHub (session_pr and the signed webhook's durable queue) and Linear (signed
// webhooks → router → pipeline, planner, triage, mentions). Their workers run as singletons (see singletons.ts); their
// webhook routes are registered with the gateway (see gateway.ts).
import type { Kysely } from 'kysely';
import type { Outbox } from '../channels/connector.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/logger.ts';
import type { GithubIntegration } from '../github/integration.ts';
import type { LinearIntegration } from '../linear/integration.ts';
import type { DispatchPlacement } from '../linear/pipeline/placement.ts';
import type { OperationForwarder } from '../linear/pipeline/remote-sessions.ts';
import type { Database } from '../store/tables/index.ts';
import type { CodingSessions } from './coding-sessions.ts';
import type { Orchestrator } from './orchestrator.ts';

/** The enabled integrations; null when off in the config. */
export interface Integrations {
  github: GithubIntegration | null;
  linear: LinearIntegration | null;
}

/** In a cluster (PostgreSQL): where this node runs Linear dispatches, and how it reaches sessions on other nodes. */
export interface LinearOnNodes {
  placement: DispatchPlacement;
  /** Prompts and approval replies for a worker on another node run there. */
  forwarder: OperationForwarder;
}

/**
 * Builds GitHub, then Linear (its passed dispatches open their PRs through GitHub), when enabled: their modules (and
 * octokit, the Linear SDK) are loaded only then. Rejects with what their builders throw: Linear refuses to start
 * without a webhook signing secret. Nothing is started.
 */
export async function buildIntegrations(deps: {
  config: Config;
  env: NodeJS.ProcessEnv;
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  coding: Pick<CodingSessions, 'sessions' | 'logs' | 'approvals'>;
  /** Linear's mentions are answered by the engine as the node's callers reach it (`routedEngine`). */
  orchestrator: Pick<Orchestrator, 'routedEngine' | 'inference' | 'codeRunner'>;
  outbox: Outbox;
  /** Cluster (PostgreSQL): dispatches run on the nodes that claim them (see cluster/linear-dispatch-node.ts). */
  linearOnNodes: LinearOnNodes | null;
}): Promise<Integrations> {
  const { config, env, db, clock, logger } = deps;
  const { sessions, logs, approvals } = deps.coding;
  const { routedEngine, inference, codeRunner } = deps.orchestrator;
  const github = config.github.enabled
    ? (await import('../github/integration.ts')).createGithubIntegration({ config, env, db, clock, logger, sessions })
    : null;
  const linear = config.linear.enabled
    ? (await import('../linear/integration.ts')).createLinearIntegration({
        config,
        env,
        db,
        clock,
        logger,
        sessions,
        logs,
        engine: routedEngine,
        inference,
        outbox: deps.outbox,
        codeRunner,
        approvals,
        ...(github ? { pullRequests: github.pullRequests } : {}),
        ...(deps.linearOnNodes ?? {}),
      })
    : null;
  return { github, linear };
}

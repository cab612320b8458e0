import type { ApprovalTables } from './approvals.ts';
import type { ChannelTables } from './channels.ts';
import type { ClusterTables } from './cluster.ts';
import type { CodingTables } from './coding.ts';
import type { EngineTables } from './engine.ts';
import type { GatewayTables } from './gateway.ts';
import type { GithubTables } from './github.ts';
import type { LinearTables } from './linear.ts';
import type { SchedulerTables } from './scheduler.ts';

/**
 * Every table of the daemon's database, each defined once (in its domain's file beside this one): the type Kysely
 * checks every query against, on SQLite and PostgreSQL alike. The migrations build the same shape on both.
 */
export interface Database
  extends
    CodingTables,
    EngineTables,
    ChannelTables,
    SchedulerTables,
    LinearTables,
    GatewayTables,
    ApprovalTables,
    GithubTables,
    ClusterTables {}

export type {
  ApprovalTables,
  ChannelTables,
  ClusterTables,
  CodingTables,
  EngineTables,
  GatewayTables,
  GithubTables,
  LinearTables,
  SchedulerTables,
};

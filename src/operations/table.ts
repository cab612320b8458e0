import { askAgentOperation, spawnAgentOperation } from './agent-orchestration.ts';
import { agentSendOperation } from './agent-send.ts';
import { agentStartOperation } from './agent-start.ts';
import { agentsOperation } from './agents.ts';
import {
  approvalDecideOperation,
  approvalRuleRemoveOperation,
  approvalRulesOperation,
  approvalsOperation,
  approveOperation,
  denyOperation,
} from './approvals.ts';
import { backgroundOperation } from './background.ts';
import { codeRunOperation } from './code-run.ts';
import {
  cronAddOperation,
  cronDisableOperation,
  cronEnableOperation,
  cronListOperation,
  cronRemoveOperation,
} from './cron.ts';
import { sessionDiffOperation } from './diff.ts';
import { foregroundOperation } from './foreground.ts';
import { getOperation } from './get.ts';
import {
  heartbeatAddOperation,
  heartbeatListOperation,
  heartbeatRemoveOperation,
  heartbeatRunOperation,
  schedulerStatusOperation,
} from './heartbeat.ts';
import { killOperation } from './kill.ts';
import { launchOperation } from './launch.ts';
import { linearDispatchesOperation } from './linear-dispatches.ts';
import { listOperation } from './list.ts';
import { nodesOperation } from './nodes.ts';
import type { Operation } from './operation.ts';
import { outputOperation } from './output.ts';
import { prOperation } from './pr.ts';
import { respondOperation } from './respond.ts';
import { resumeOperation } from './resume.ts';
import { statsOperation } from './stats.ts';

/** Every user-facing operation, once. Tools, chat commands, RPC methods and CLI subcommands are generated from it. */
export const OPERATIONS: readonly Operation[] = [
  launchOperation,
  respondOperation,
  outputOperation,
  foregroundOperation,
  backgroundOperation,
  killOperation,
  listOperation,
  statsOperation,
  resumeOperation,
  getOperation,
  sessionDiffOperation,
  agentsOperation,
  agentStartOperation,
  agentSendOperation,
  cronAddOperation,
  cronListOperation,
  cronRemoveOperation,
  cronEnableOperation,
  cronDisableOperation,
  heartbeatAddOperation,
  heartbeatListOperation,
  heartbeatRemoveOperation,
  heartbeatRunOperation,
  schedulerStatusOperation,
  codeRunOperation,
  spawnAgentOperation,
  askAgentOperation,
  linearDispatchesOperation,
  approvalsOperation,
  approveOperation,
  denyOperation,
  approvalDecideOperation,
  approvalRulesOperation,
  approvalRuleRemoveOperation,
  prOperation,
  nodesOperation,
];

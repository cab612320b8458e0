// The orchestrator's tools from the operations table: every operation exposed as a tool (claude_launch, …,
// spawn_agent, send_session_message) whose `needs` this daemon's services meet (and that the config lets an agent run), run with the calling engine session as
// the caller so origin channels resolve to its chat and agent operations know which session calls.
import { runToolCall } from '../engine/tool.ts';
import type { AgentToolbox } from '../engine/toolbox.ts';
import { canRun } from './needs.ts';
import type { Operation, OperationServices } from './operation.ts';
import { operationTools } from './tools.ts';

/** What the table's toolbox is built over. */
export interface OperationsToolboxDeps {
  ops: readonly Operation[];
  /** The daemon's services, complete (the engine is bound to this toolbox through engine/late-toolbox.ts). */
  services: OperationServices;
}

/** An AgentToolbox over the operations table: the engine's only source of tools. A tool whose service is missing is not offered. */
export function createOperationsToolbox(deps: OperationsToolboxDeps): AgentToolbox {
  const offered = deps.ops.filter(
    (op) => canRun(op, deps.services) && (op.offeredToAgent?.(deps.services.config) ?? true),
  );
  const tools = operationTools(offered);
  const specs = tools.map((t) => t.spec);
  return {
    tools: () => specs,
    run: (call, session, signal) =>
      runToolCall(
        tools,
        {
          caller: { kind: 'agent', sessionId: session.id, ...(session.channel ? { channel: session.channel } : {}) },
          services: deps.services,
          ...(signal ? { signal } : {}),
        },
        call,
      ),
  };
}

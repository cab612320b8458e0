// The orchestrator's tools from the operations table: every operation exposed as a tool (claude_launch, …,
// spawn_agent, send_session_message), run with the calling engine session as the caller so origin channels resolve to
// its chat and agent operations know which session calls.
import { runToolCall } from '../engine/tool.ts';
import type { AgentToolbox } from '../engine/toolbox.ts';
import type { Operation, OperationServices } from './operation.ts';
import { operationTools } from './tools.ts';

/** What the table's toolbox is built over. */
export interface OperationsToolboxDeps {
  ops: readonly Operation[];
  /** Read at each call, so `services.engine` may be set after the engine is built from this toolbox. */
  services: OperationServices;
}

/** An AgentToolbox over the operations table: the engine's only source of tools. */
export function createOperationsToolbox(deps: OperationsToolboxDeps): AgentToolbox {
  const tools = operationTools(deps.ops);
  const specs = tools.map((t) => t.spec);
  return {
    tools: () => specs,
    run: (call, session) =>
      runToolCall(tools, { caller: { kind: 'agent', sessionId: session.id, ...(session.channel ? { channel: session.channel } : {}) }, services: deps.services }, call),
  };
}

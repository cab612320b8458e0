// The orchestrator's tools from the operations table: every operation exposed as a tool (claude_launch, …,
// list_agents), run with the calling engine session as the caller so origin channels resolve to its chat.
import { mergeToolboxes } from '../engine/toolbox.ts';
import type { AgentToolbox } from '../engine/toolbox.ts';
import type { Operation, OperationServices } from './operation.ts';
import { runTool, toolDefinitions } from './tools.ts';

export interface OperationsToolboxDeps {
  ops: readonly Operation[];
  /** Read at each call, so `services.engine` may be set after the engine is built from this toolbox. */
  services: OperationServices;
  /** Toolboxes merged in front of the table's tools (a name they offer hides the table's). */
  extra?: AgentToolbox[];
}

/**
 * An AgentToolbox over the operations table. The engine merges its own tools (start_background_agent,
 * send_session_message) into whatever toolbox it is given, so this one needs no engine reference; `extra` merges
 * further toolboxes in front.
 */
export function createOperationsToolbox(deps: OperationsToolboxDeps): AgentToolbox {
  const definitions = toolDefinitions(deps.ops);
  const table: AgentToolbox = {
    tools: () => definitions,
    run: (call, session) =>
      runTool(deps.ops, call.name, call.input, { kind: 'agent', sessionId: session.id, ...(session.channel ? { channel: session.channel } : {}) }, deps.services),
  };
  return deps.extra && deps.extra.length > 0 ? mergeToolboxes(...deps.extra, table) : table;
}

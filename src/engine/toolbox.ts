// The tools an engine session's model may call. The engine knows tools only through this interface and has none of
// its own: what is injected (operations/toolbox.ts builds it from the operations table: claude_launch, …,
// spawn_agent, send_session_message) is all its sessions' models see.
import type { ToolCall, ToolSpec } from '../inference/types.ts';
import type { SessionDescriptor } from './api.ts';
import type { ToolOutcome } from './tool.ts';

/** The engine session a tool runs for. */
export interface EngineSessionInfo {
  id: string;
  descriptor: SessionDescriptor;
  /**
   * The chat this session serves, as a channel string: its own for a user session, its nearest user ancestor's for a
   * subagent; absent for cron and heartbeat sessions (and subagents without a user ancestor).
   */
  channel?: string;
}

/** A set of tools. `run` validates the call's input itself and reports failures as error outcomes. */
export interface AgentToolbox {
  /** The tools offered to this session's model. */
  tools(session: EngineSessionInfo): ToolSpec[];
  /**
   * Runs one call; may throw (the engine turns a throw into an error outcome). `signal` aborts when the turn is
   * stopped: a tool still running should stop what it started (code_run kills its session).
   */
  run(call: ToolCall, session: EngineSessionInfo, signal?: AbortSignal): Promise<ToolOutcome>;
}

/** A toolbox with no tools. */
export const emptyToolbox: AgentToolbox = {
  tools: () => [],
  run: async (call) => ({ text: `Unknown tool ${call.name}.`, isError: true }),
};

/**
 * Merges toolboxes: their tools in order; a name offered by an earlier toolbox hides the same name in later ones.
 * A call goes to the toolbox that offers its name to this session, or comes back as an unknown-tool error.
 */
export function mergeToolboxes(...boxes: AgentToolbox[]): AgentToolbox {
  const owners = (session: EngineSessionInfo): Map<string, { box: AgentToolbox; spec: ToolSpec }> => {
    const map = new Map<string, { box: AgentToolbox; spec: ToolSpec }>();
    for (const box of boxes) {
      for (const spec of box.tools(session)) if (!map.has(spec.name)) map.set(spec.name, { box, spec });
    }
    return map;
  };
  return {
    tools: (session) => [...owners(session).values()].map((o) => o.spec),
    run: async (call, session, signal) => {
      const owner = owners(session).get(call.name);
      if (!owner) return { text: `Unknown tool ${call.name}.`, isError: true };
      return owner.box.run(call, session, signal);
    },
  };
}

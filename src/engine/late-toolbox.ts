// How the toolbox → engine cycle is broken: the engine is built with this handle, the operations' toolbox (whose
// tools act on the engine) is built once the services are complete, and the composition root binds it here, once,
// before the engine starts. Nothing else is late.
import { AppError } from '../core/errors.ts';
import type { AgentToolbox } from './toolbox.ts';

/** An AgentToolbox that forwards to the toolbox bound to it; `bind` may be called once. */
export interface LateToolbox extends AgentToolbox {
  /** Binds the real toolbox; throws when one is already bound. */
  bind(toolbox: AgentToolbox): void;
}

/** A toolbox handle to build the engine with before its tools exist; using it before `bind` is an error. */
export function lateToolbox(): LateToolbox {
  let bound: AgentToolbox | undefined;
  const target = (): AgentToolbox => {
    if (!bound) throw new AppError('unavailable', 'the engine tools are not bound yet (the daemon is starting)');
    return bound;
  };
  return {
    bind(toolbox) {
      if (bound) throw new Error('the engine toolbox is already bound');
      bound = toolbox;
    },
    tools: (session) => target().tools(session),
    run: (call, session, signal) => target().run(call, session, signal),
  };
}

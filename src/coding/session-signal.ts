// What a coding Session tells its manager (and, through it, the notifiers, the wake router and the Linear pipeline).
import type { Session } from './session.ts';
import type { UserMessageSource, WaitingReason } from './session-log.ts';

/**
 * What a Session tells its manager; discriminated by `type`. Each is already in the log when it is signalled.
 * `via` is the chat channel string a person typed the command in that caused the signal: that chat already shows the
 * command's own reply, so notifiers need not repeat it there.
 */
export type SessionSignal =
  /** A run started (a launch or a resume), after its `run` and `user` records. */
  | { type: 'launched'; session: Session; kind: 'launch' | 'resume'; via?: string }
  | { type: 'output'; session: Session; text: string; seq: number }
  | { type: 'tool'; session: Session; name: string; input: unknown }
  /** The agent explicitly asked the user something (its `waiting` with reason `question` follows at turn end). */
  | { type: 'question'; session: Session; text: string }
  /** The agent asks to use a tool (its `waiting` with reason `permission` follows at once). */
  | { type: 'permission'; session: Session; requestId: string; tool: string; input: unknown }
  /** A message was sent into the running session; `answered` when it answered a pending permission request. */
  | { type: 'message'; session: Session; text: string; source: UserMessageSource; answered: boolean; via?: string }
  | { type: 'waiting'; session: Session; reason: WaitingReason; preview: string }
  | { type: 'budgetExhausted'; session: Session }
  | { type: 'running'; session: Session }
  | { type: 'ended'; session: Session; via?: string }
  /** A chat channel started (`on`) or stopped streaming the session live (claude_fg / claude_bg). */
  | { type: 'view'; session: Session; channel: string; on: boolean }
  /** The daemon is stopping: the session was marked interrupted (no `ended` follows). */
  | { type: 'interrupted'; session: Session };

// What a user turn cut off by a crash had already answered, read from the steps it recorded: restore delivers a
// recorded answer instead of "Internal error.", and never answers one turn twice.
import type { TurnStep } from './history.ts';

/**
 * The answer state of a cut-off turn, for its chat:
 * - `answered`: a terminal reply (the model's final text, a failure text, "Internal error.") was recorded; only the
 *   recorded replies are delivered again (idempotently).
 * - `unsent`: the model's final answer was recorded but not yet its reply; `text` is to be sent.
 * - `silent`: the model finished without text; nothing is owed.
 * - `none`: no answer was recorded; the turn gets "Internal error.".
 */
export type CutOffAnswer =
  { kind: 'answered' } | { kind: 'unsent'; text: string } | { kind: 'silent' } | { kind: 'none' };

/** Reads the answer state of a cut-off turn from its steps (oldest first). */
export function cutOffAnswer(steps: readonly TurnStep[]): CutOffAnswer {
  let lastAssistant = -1;
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    if (steps[i]?.type === 'assistant') {
      lastAssistant = i;
      break;
    }
  }
  const final = steps[lastAssistant];
  if (final?.type === 'assistant' && final.toolCalls.length === 0) {
    // The model's last word: its reply is the outgoing record right after it, if written.
    if (steps.slice(lastAssistant + 1).some((s) => s.type === 'outgoing')) return { kind: 'answered' };
    return final.text.trim() ? { kind: 'unsent', text: final.text } : { kind: 'silent' };
  }
  // Otherwise a reply recorded after the last model or tool step is terminal (a failure text or "Internal error."),
  // unless it only echoes the text of a model reply that went on to call tools.
  let i = steps.length - 1;
  while (i >= 0 && steps[i]?.type === 'outgoing') i -= 1;
  if (i === steps.length - 1) return { kind: 'none' };
  const before = steps[i];
  const first = steps[i + 1];
  const echo =
    before?.type === 'assistant' && first?.type === 'outgoing' && first.text === before.text && i + 2 === steps.length;
  return echo ? { kind: 'none' } : { kind: 'answered' };
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cutOffAnswer } from './cut-off-answer.ts';
import type { TurnStep } from './history.ts';

const said = (text: string, calls = 0): TurnStep => ({
  type: 'assistant',
  text,
  toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `c${i}`, name: 'tool', input: {} })),
});
const sent = (text: string): TurnStep => ({ type: 'outgoing', text, target: 'telegram|1' });
const result: TurnStep = { type: 'tool_result', toolCallId: 'c0', name: 'tool', content: 'ok', isError: false };

describe('cutOffAnswer', () => {
  it('nothing recorded, or cut off mid-tool: no answer', () => {
    assert.deepEqual(cutOffAnswer([]), { kind: 'none' });
    assert.deepEqual(cutOffAnswer([said('', 1), result]), { kind: 'none' });
    assert.deepEqual(
      cutOffAnswer([said('looking', 1), sent('looking')]),
      { kind: 'none' },
      'an echo of a model text that called tools',
    );
  });
  it('a final answer recorded but not sent: unsent; sent: answered; empty: silent', () => {
    assert.deepEqual(cutOffAnswer([said('', 1), result, said('done')]), { kind: 'unsent', text: 'done' });
    assert.deepEqual(cutOffAnswer([said('done'), sent('done')]), { kind: 'answered' });
    assert.deepEqual(cutOffAnswer([said('  ')]), { kind: 'silent' });
  });
  it('a terminal reply after the last step (a failure text, "Internal error."): answered', () => {
    assert.deepEqual(cutOffAnswer([said('', 1), result, sent('Inference failed.')]), { kind: 'answered' });
    assert.deepEqual(cutOffAnswer([sent('Internal error.')]), { kind: 'answered' });
    assert.deepEqual(cutOffAnswer([said('looking', 1), sent('looking'), sent('Internal error.')]), {
      kind: 'answered',
    });
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { decodeTypedLine, isObject, schemaProblem } from './json-line.ts';

test('decodeTypedLine: a JSON object with a string type, else why not', () => {
  assert.deepEqual(decodeTypedLine('{"type":"turn.started","x":1}'), {
    ok: true,
    value: { type: 'turn.started', x: 1 },
    type: 'turn.started',
  });
  assert.deepEqual(decodeTypedLine('not json at all'), { ok: false, error: 'not JSON' });
  assert.deepEqual(decodeTypedLine('[1,2]'), { ok: false, error: 'not a JSON object' });
  assert.deepEqual(decodeTypedLine('null'), { ok: false, error: 'not a JSON object' });
  assert.deepEqual(decodeTypedLine('{"type":42}'), { ok: false, error: 'no string "type"' });
});

test('schemaProblem: the type and the schema issues on one line', () => {
  const parsed = z.object({ text: z.string() }).safeParse({ text: 42 });
  assert.equal(parsed.success, false);
  if (parsed.success) return;
  const problem = schemaProblem('item.completed:agent_message', parsed.error);
  assert.equal(problem.ok, false);
  assert.match(problem.error, /^bad "item\.completed:agent_message": .*text/);
  assert.doesNotMatch(problem.error, /\n/);
});

test('isObject: plain objects only', () => {
  assert.deepEqual([{}, [], null, 'x', 1].map(isObject), [true, false, false, false, false]);
});

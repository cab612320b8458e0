// The process-wide zod messages for a value left out, as every surface shows them (through core/errors.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { formatZodError } from './errors.ts';

const schema = z.strictObject({
  id: z.string(),
  kind: z.enum(['a', 'b']),
  nested: z.object({ count: z.number() }),
  named: z.string({ error: 'give the name' }),
  optional: z.string().optional(),
});

function messageOf(value: unknown): string {
  const parsed = schema.safeParse(value);
  assert.equal(parsed.success, false);
  return parsed.success ? '' : formatZodError(parsed.error);
}

describe('zod messages', () => {
  it('says a value left out is required, with what it should be, at any depth', () => {
    assert.equal(
      messageOf({ nested: {} }),
      'id: required (string); kind: required (one of "a", "b"); nested.count: required (number); named: give the name',
    );
  });

  it("keeps zod's own message for a value of the wrong kind", () => {
    assert.equal(
      messageOf({ id: 1, kind: 'c', nested: { count: 'x' }, named: 'n' }),
      'id: Invalid input: expected string, received number; kind: Invalid option: expected one of "a"|"b"; nested.count: Invalid input: expected number, received string',
    );
  });
});

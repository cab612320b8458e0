import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startOverrides } from './start.ts';

describe('startOverrides', () => {
  it('keeps a --set __proto__ key as an entry of its own instead of replacing the prototype', () => {
    const overrides = startOverrides({ set: ['__proto__={"maxSessions": 1}', 'maxSessions=3'] });
    assert.deepEqual(Object.keys(overrides).sort(), ['__proto__', 'maxSessions']);
    assert.equal(Object.getPrototypeOf(overrides), null);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { roundUsd } from './usd.ts';

describe('roundUsd', () => {
  it('rounds to a millionth of a dollar and prints as the short decimal', () => {
    assert.equal(roundUsd(0.0007199999999999999), 0.00072);
    assert.equal(JSON.stringify(roundUsd(0.1 + 0.2)), '0.3');
    assert.equal(roundUsd(1.2345675), 1.234568);
    assert.equal(roundUsd(1e-7), 0);
    assert.ok(Object.is(roundUsd(-0), 0), '-0 becomes 0');
  });

  it('gives the same number as parsing the six-decimal text, for amounts from a millionth to $100,000', () => {
    // A fixed sequence (no randomness): spread over six orders of magnitude, with fractional parts of every kind.
    for (let i = 1; i <= 200_000; i += 1) {
      const amount = ((i * 7919) % 100_003) * 10 ** ((i % 6) - 5) + i * 1e-9;
      const viaText = Number((Math.round(amount * 1e6) / 1e6).toFixed(6)) + 0;
      assert.ok(Object.is(roundUsd(amount), viaText), `${amount}: ${roundUsd(amount)} vs ${viaText}`);
    }
  });
});

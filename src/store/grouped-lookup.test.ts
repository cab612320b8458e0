import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupedLookup } from './grouped-lookup.ts';

describe('GroupedLookup', () => {
  it('looks up the keys asked for in one turn with one query, at most maxGroup keys a query', async () => {
    const queries: number[][] = [];
    const lookup = new GroupedLookup<number>(async (keys) => {
      queries.push([...keys]);
      return (key) => key % 2 === 0;
    }, 3);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((k) => lookup.has(k)));
    assert.deepEqual(answers, [false, true, false, true, false]);
    assert.deepEqual(queries, [
      [1, 2, 3],
      [4, 5],
    ]);
    assert.equal(await lookup.has(6), true);
    assert.deepEqual(queries.at(-1), [6]);
  });

  it('a failed query rejects its group only; the next keys are looked up again', async () => {
    let fail = true;
    const lookup = new GroupedLookup<string>(async () => {
      if (fail) throw new Error('database gone');
      return () => true;
    }, 10);
    const results = await Promise.allSettled([lookup.has('a'), lookup.has('b')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    fail = false;
    assert.equal(await lookup.has('c'), true);
  });
});

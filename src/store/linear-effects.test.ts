import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { LinearEffectStore } from './linear-effects.ts';

describeEachDatabase('LinearEffectStore', (fresh) => {
  it('claims a key once: new, then pending until done; a release frees a pending claim only; prune drops old entries', async () => {
    const effects = new LinearEffectStore((await fresh()).db);
    assert.equal(await effects.state('k'), null);
    assert.equal(await effects.claim('k', 1), 'new');
    assert.equal(await effects.claim('k', 2), 'pending');
    await effects.markDone('k', 3);
    assert.equal(await effects.claim('k', 4), 'done');
    await effects.release('k');
    assert.equal(await effects.state('k'), 'done', 'a done effect is never released');
    assert.equal(await effects.claim('r', 5), 'new');
    await effects.release('r');
    assert.equal(await effects.state('r'), null);
    assert.equal(await effects.claim('old', 1), 'new');
    assert.equal(await effects.prune(4), 2, 'k (done at 3) and old');
    assert.equal(await effects.state('k'), null);
  });
});

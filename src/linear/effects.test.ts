import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openTestStore } from '../../test/support/test-store.ts';
import { ManualClock } from '../core/clock.ts';
import { silentLogger } from '../core/logger.ts';
import { LinearEffectStore } from '../store/linear-effects.ts';
import { LinearApiError } from './api/types.ts';
import { effectId, LinearEffects } from './effects.ts';

async function setup() {
  const store = new LinearEffectStore((await openTestStore(':memory:')).db);
  return { store, effects: new LinearEffects(store, new ManualClock(), silentLogger()) };
}

describe('LinearEffects', () => {
  it('sends an effect once under its key, with a stable UUID v4 client id', async () => {
    const { effects, store } = await setup();
    const ids: string[] = [];
    const send = async (id: string) => void ids.push(id);
    assert.equal((await effects.run('stop:a/response', 'keyed', send)).kind, 'sent');
    assert.deepEqual(await effects.run('stop:a/response', 'keyed', send), { kind: 'skipped', reason: 'done' });
    assert.deepEqual(ids, [effectId('stop:a/response')]);
    assert.match(ids[0] ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(await store.state('stop:a/response'), 'done');
  });

  it('resends a keyed effect claimed but not confirmed under the same id; Linear refusing the id means it is there', async () => {
    const { effects, store } = await setup();
    await store.claim('k/answer', 0);
    const ids: string[] = [];
    const refused = await effects.run('k/answer', 'keyed', async (id) => {
      ids.push(id);
      throw new LinearApiError('user', 'Entity already exists');
    });
    assert.deepEqual(refused, { kind: 'skipped', reason: 'in-linear' });
    assert.deepEqual(ids, [effectId('k/answer')]);
    await store.claim('k/other', 0);
    assert.equal(
      (await effects.run('k/other', 'keyed', async () => 'ok')).kind,
      'sent',
      'it had not got there: sent now',
    );
  });

  it('does not send an at-most-once effect an earlier attempt claimed without confirming', async () => {
    const { effects, store } = await setup();
    await store.claim('job:x/update', 0);
    let calls = 0;
    assert.deepEqual(await effects.run('job:x/update', 'at-most-once', async () => void (calls += 1)), {
      kind: 'skipped',
      reason: 'unconfirmed',
    });
    assert.equal(calls, 0);
  });

  it('releases the claim of an effect Linear refused before doing anything, and keeps it after a network failure', async () => {
    const { effects, store } = await setup();
    await assert.rejects(
      effects.run('a/x', 'at-most-once', async () => Promise.reject(new LinearApiError('rate_limit', 'slow down'))),
    );
    assert.equal(await store.state('a/x'), null, 'sent afresh next time');
    await assert.rejects(
      effects.run('b/x', 'at-most-once', async () => Promise.reject(new LinearApiError('network', 'reset'))),
    );
    assert.equal(await store.state('b/x'), 'pending', 'it may have been applied');
  });
});

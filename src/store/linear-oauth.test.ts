import assert from 'node:assert/strict';
import { it } from 'node:test';
import { describeEachDatabase } from '../../test/support/databases.ts';
import { LinearOAuthStore } from './linear-oauth.ts';

const grant = { accessToken: 'at-1', refreshToken: 'rt-1', tokenType: 'Bearer', scope: 'read,write', expiresAt: 5_000 };
const identity = { appUserId: 'u1', appUserName: 'App', organizationId: 'o1', organizationName: 'Org' };

describeEachDatabase('LinearOAuthStore', (fresh) => {
  it('stores an install, replaces it, refreshes it (keeping the refresh token Linear did not rotate) and forgets it', async () => {
    const store = new LinearOAuthStore((await fresh()).db);
    assert.equal(await store.tokens(), undefined);
    await store.saveInstall('default', grant, identity, 1_000);
    await store.saveInstall('default', { ...grant, accessToken: 'at-2' }, { ...identity, appUserName: 'App 2' }, 2_000);
    const installed = await store.tokens();
    assert.deepEqual(
      { ...installed },
      {
        profile: 'default',
        ...grant,
        accessToken: 'at-2',
        ...identity,
        appUserName: 'App 2',
        createdAt: 1_000,
        updatedAt: 2_000,
      },
    );
    const kept = await store.saveRefresh('default', { ...grant, accessToken: 'at-3', refreshToken: null }, 3_000);
    assert.equal(kept.accessToken, 'at-3');
    assert.equal(kept.refreshToken, 'rt-1');
    assert.equal(
      (await store.saveRefresh('default', { ...grant, accessToken: 'at-4', refreshToken: 'rt-2' }, 4_000)).refreshToken,
      'rt-2',
    );
    await assert.rejects(store.saveRefresh('other', grant, 4_000), /no Linear OAuth tokens stored for profile other/);
    await store.saveIdentity('default', 'u9', 'Nine', 5_000);
    assert.equal((await store.tokens())?.appUserId, 'u9');
    assert.equal(await store.deleteTokens(), true);
    assert.equal(await store.deleteTokens(), false);
  });

  it('consumes a state once, refuses unknown, reused and expired ones, and records the outcome', async () => {
    const store = new LinearOAuthStore((await fresh()).db);
    await store.addState('s1', 'http://cb', 1_000, 2_000);
    await store.addState('s2', 'http://cb', 1_000, 1_500);
    assert.deepEqual(await store.consumeState('nope', 1_100), { check: 'unknown' });
    assert.deepEqual(await store.consumeState('s1', 1_100), { check: 'ok', redirectUri: 'http://cb' });
    assert.deepEqual(await store.consumeState('s1', 1_200), { check: 'reused' });
    assert.deepEqual(await store.consumeState('s2', 1_600), { check: 'expired' });
    assert.deepEqual(await store.consumeState('s2', 1_700), { check: 'reused' }, 'an expired state is used up too');
    const both = await Promise.all([
      store.addState('s3', 'http://cb', 1_000, 9_000).then(() => store.consumeState('s3', 1_100)),
      store.consumeState('s3', 1_100),
    ]);
    assert.ok(both.filter((r) => r.check === 'ok').length <= 1);
    assert.equal(await store.stateOutcome('s1'), undefined);
    await store.setStateOutcome('s1', 'connected');
    assert.equal(await store.stateOutcome('s1'), 'connected');
    // States expired for more than a day are pruned when a new one is added.
    await store.addState('s4', 'http://cb', 1_500 + 86_400_001, 1_500 + 86_400_001 + 1_000);
    assert.deepEqual(await store.consumeState('s2', 1_500 + 86_400_001), { check: 'unknown' });
  });
});

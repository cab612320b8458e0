import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openTestStore } from '../../../test/support/test-store.ts';
import { ManualClock } from '../../core/clock.ts';
import { LinearOAuthStore } from '../../store/linear-oauth.ts';
import { appUserIdSource } from './service.ts';

const grant = { accessToken: 'a', refreshToken: 'r', tokenType: 'Bearer', scope: 'read', expiresAt: null };
const noIdentity = { appUserId: null, appUserName: null, organizationId: null, organizationName: null };

describe('appUserIdSource', () => {
  it('uses the app user stored with the OAuth installation without asking Linear', async () => {
    const store = new LinearOAuthStore((await openTestStore(':memory:')).db);
    await store.saveInstall('default', grant, { ...noIdentity, appUserId: 'app-1', appUserName: 'switchboard' }, 1);
    let asked = 0;
    const source = appUserIdSource(
      { viewer: async () => ((asked += 1), { id: 'other', name: 'x' }) },
      store,
      new ManualClock(),
    );
    assert.equal(await source(), 'app-1');
    assert.equal(asked, 0);
  });

  it('asks viewer once, remembers the answer, stores it with the tokens, and asks again after a failure', async () => {
    const store = new LinearOAuthStore((await openTestStore(':memory:')).db);
    await store.saveInstall('default', grant, noIdentity, 1);
    let asked = 0;
    let fail = true;
    const source = appUserIdSource(
      {
        viewer: async () => {
          asked += 1;
          if (fail) throw new Error('Linear unreachable');
          return { id: 'app-2', name: 'switchboard' };
        },
      },
      store,
      new ManualClock(),
    );
    await assert.rejects(source(), /unreachable/);
    fail = false;
    assert.equal(await source(), 'app-2');
    assert.equal(await source(), 'app-2');
    assert.equal(asked, 2);
    assert.equal((await store.tokens())?.appUserId, 'app-2');
  });
});

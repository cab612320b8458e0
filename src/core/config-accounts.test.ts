import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { accountKey, accountsOf, channelWithAccounts } from './config-accounts.ts';

const section = channelWithAccounts({
  token: z.string().optional(),
  tokenEnv: z.string().default('BOT_TOKEN'),
  allowed: z.array(z.number()).default([]),
});

describe('channel accounts', () => {
  it('a section without accounts is its one default account', () => {
    assert.deepEqual(accountsOf(section.parse({ enabled: true, allowed: [1] })), [
      { config: { enabled: true, tokenEnv: 'BOT_TOKEN', allowed: [1] } },
    ]);
  });

  it("each named account takes the section's values for what it leaves out, not the fields' defaults", () => {
    const parsed = section.parse({
      enabled: true,
      tokenEnv: 'SHARED_TOKEN',
      allowed: [1],
      accounts: { work: { tokenEnv: 'WORK_TOKEN' }, home: { allowed: [2] } },
    });
    assert.deepEqual(accountsOf(parsed), [
      { account: 'work', config: { enabled: true, tokenEnv: 'WORK_TOKEN', allowed: [1] } },
      { account: 'home', config: { enabled: true, tokenEnv: 'SHARED_TOKEN', allowed: [2] } },
    ]);
  });

  it('refuses account names that cannot be a channel-string segment and unknown keys in an account', () => {
    assert.equal(section.safeParse({ accounts: { 'a|b': {} } }).success, false);
    assert.equal(section.safeParse({ accounts: { a: { nope: 1 } } }).success, false);
  });

  it("names an account's config keys", () => {
    assert.equal(accountKey('slack', undefined), 'channels.slack');
    assert.equal(accountKey('slack', 'work'), 'channels.slack.accounts.work');
    assert.equal(accountKey('telegram', 'home', 'allowedUserIds'), 'channels.telegram.accounts.home.allowedUserIds');
    assert.equal(accountKey('signal', undefined, 'allowedNumbers'), 'channels.signal.allowedNumbers');
  });
});

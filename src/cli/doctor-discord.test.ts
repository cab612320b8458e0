import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Config } from '../core/config.ts';
import { configSchema } from '../core/config.ts';
import { discordChecks } from './doctor-discord.ts';

function config(discord: Record<string, unknown>): Config {
  return configSchema.parse({ channels: { discord } });
}

describe('doctor: Discord', () => {
  it('says nothing while the channel is off', () => {
    assert.deepEqual(discordChecks(config({}), {}), []);
  });

  it('fails a bot without a token, naming the keys; warns without allowed users or guilds', () => {
    const [missing] = discordChecks(config({ enabled: true, tokenEnv: 'NO_SUCH_VAR' }), {});
    assert.equal(missing?.status, 'fail');
    assert.match(missing?.detail ?? '', /channels\.discord\.token[\s\S]*NO_SUCH_VAR/);
    const [nobody] = discordChecks(config({ enabled: true }), { DISCORD_BOT_TOKEN: 't' });
    assert.equal(nobody?.status, 'warn');
    assert.match(nobody?.detail ?? '', /channels\.discord\.allowedUserIds is empty/);
    const [noGuilds] = discordChecks(config({ enabled: true, token: 't', allowedUserIds: ['1'] }), {});
    assert.equal(noGuilds?.status, 'warn');
    assert.match(noGuilds?.detail ?? '', /guildIds/);
  });

  it('checks each account with the section as its defaults', () => {
    const checks = discordChecks(
      config({
        enabled: true,
        allowedUserIds: ['1'],
        guildIds: ['9'],
        accounts: { work: { token: 'a' }, home: { tokenEnv: 'HOME_BOT' } },
      }),
      {},
    );
    assert.deepEqual(
      checks.map((c) => [c.label, c.status]),
      [
        ['Discord (work)', 'ok'],
        ['Discord (home)', 'fail'],
      ],
    );
    assert.match(checks[1]?.detail ?? '', /channels\.discord\.accounts\.home\.token/);
  });
});

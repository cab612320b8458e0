import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../core/config.ts';
import { slackChecks } from './doctor-slack.ts';

function config(slack: Record<string, unknown>) {
  return configSchema.parse({ channels: { slack: { enabled: true, ...slack } } });
}

describe('doctor: Slack', () => {
  it('fails an account without the secrets of its mode, naming the key; warns on an empty allow-list', () => {
    const [missing] = slackChecks(config({ botToken: 'xoxb-1' }), {});
    assert.equal(missing?.status, 'fail');
    assert.match(missing?.detail ?? '', /channels\.slack\.appToken[\s\S]*SLACK_APP_TOKEN/);
    const [http] = slackChecks(config({ mode: 'http', botToken: 'xoxb-1' }), { SLACK_SIGNING_SECRET: 's' });
    assert.equal(http?.status, 'warn');
    assert.match(http?.detail ?? '', /allowedUserIds is empty/);
  });

  it('one check per account, named', () => {
    const checks = slackChecks(
      config({
        allowedUserIds: ['U1'],
        accounts: { work: { botTokenEnv: 'WORK_BOT', appTokenEnv: 'WORK_APP' }, home: {} },
      }),
      { WORK_BOT: 'xoxb-w', WORK_APP: 'xapp-w' },
    );
    assert.deepEqual(
      checks.map((c) => [c.label, c.status]),
      [
        ['Slack (work)', 'ok'],
        ['Slack (home)', 'fail'],
      ],
    );
    assert.match(checks[1]?.detail ?? '', /channels\.slack\.accounts\.home\.botToken/);
  });

  it('nothing when the channel is off', () => {
    assert.deepEqual(slackChecks(configSchema.parse({}), {}), []);
  });
});

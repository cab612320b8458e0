import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandToInbound, plainText, pressToInbound, slackBlockActionsSchema } from './slack-inbound.ts';

describe('Slack messages in', () => {
  it("reads a person's text: the app's mention removed, mentions, channels and links plain, escapes undone", () => {
    assert.equal(
      plainText('<@UBOT> /claude fix <https://x.test|x.test> &amp; <#C1|general> with <@U2>', 'UBOT'),
      '/claude fix https://x.test & #general with @U2',
    );
    assert.equal(plainText(' /claude_sessions', 'UBOT'), '/claude_sessions');
  });

  it('the slash command passes its first word on as the command', () => {
    const base = { command: '/switchboard', user_id: 'U1', channel_id: 'D1', trigger_id: 't1' };
    assert.equal(
      commandToInbound({ ...base, text: 'claude --name x fix it' }, undefined, 0)?.text,
      '/claude --name x fix it',
    );
    assert.equal(commandToInbound({ ...base, text: '/approve k3 session' }, 'work', 0)?.text, '/approve k3 session');
    assert.equal(commandToInbound({ ...base, text: '  ' }, undefined, 0), null);
    assert.equal(commandToInbound({ ...base, text: 'help' }, undefined, 0), null);
  });

  it('ignores a press of a button that is not the connector’s', () => {
    const payload = slackBlockActionsSchema.parse({
      type: 'block_actions',
      user: { id: 'U1' },
      channel: { id: 'C1' },
      message: { ts: '1.1' },
      actions: [{ action_id: 'other-app', value: '/approve x' }],
    });
    assert.equal(pressToInbound(payload, undefined, 0), null);
  });
});

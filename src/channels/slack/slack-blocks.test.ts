import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeliveryError } from '../delivery-error.ts';
import { renderMessage, SLACK_MAX_MESSAGE_LENGTH, toMrkdwn } from './slack-blocks.ts';

describe('Slack messages out', () => {
  it('escapes &, < and >, and translates bold and links', () => {
    assert.equal(toMrkdwn('a < b && c > d'), 'a &lt; b &amp;&amp; c &gt; d');
    assert.equal(
      toMrkdwn('**done** see [the PR](https://x.test/pr?a=1&b=2)'),
      '*done* see <https://x.test/pr?a=1&amp;b=2|the PR>',
    );
  });

  it('a message without buttons is text alone; with buttons, sections then one actions block per row', () => {
    assert.deepEqual(renderMessage({ text: 'hi' }), { text: 'hi' });
    const long = `${'x'.repeat(SLACK_MAX_MESSAGE_LENGTH - 10)}\n${'y'.repeat(100)}`;
    const rendered = renderMessage({
      text: long,
      buttons: [[{ label: 'Allow', command: '/approve a' }], [{ label: 'Deny', command: '/deny a' }]],
    });
    const types = rendered.blocks?.map((b) => b.type);
    assert.deepEqual(types, ['section', 'section', 'actions', 'actions']);
    const ids = rendered.blocks?.flatMap((b) => (b.type === 'actions' ? b.elements.map((e) => e.action_id) : []));
    assert.deepEqual(ids, ['switchboard:0-0', 'switchboard:1-0']);
    assert.ok(rendered.blocks?.every((b) => b.type !== 'section' || b.text.text.length <= SLACK_MAX_MESSAGE_LENGTH));
  });

  it('an edit without buttons replaces the old ones with the text alone', () => {
    assert.deepEqual(renderMessage({ text: 'done' }, true).blocks, [
      { type: 'section', text: { type: 'mrkdwn', text: 'done' } },
    ]);
  });

  it('refuses a button Slack would refuse, for good', () => {
    assert.throws(
      () => renderMessage({ text: 'q', buttons: [[{ label: ' ', command: '/x' }]] }),
      (e) => e instanceof DeliveryError && e.kind === 'permanent',
    );
  });
});

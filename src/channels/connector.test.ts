import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTarget, parseTarget, sameTarget } from './connector.ts';

describe('channel strings', () => {
  it('parses the seed forms and formats them back', () => {
    for (const text of ['telegram|123', 'telegram|bot2|123', 'telegram||-100123|42', 'web|local']) {
      const target = parseTarget(text);
      assert.ok(target, text);
      assert.equal(formatTarget(target), text);
    }
    assert.deepEqual(parseTarget('telegram|bot2|123'), { channel: 'telegram', account: 'bot2', chat: '123' });
  });

  it('treats a bare number as a Telegram chat and refuses unknown or malformed strings', () => {
    assert.deepEqual(parseTarget('12345'), { channel: 'telegram', chat: '12345' });
    for (const bad of ['unknown', '', '  ', 'telegram', 'a|b|c|d|e', 'tele gram|1', '|1', 'telegram|']) {
      assert.equal(parseTarget(bad), null, bad);
    }
    assert.equal(parseTarget(undefined), null);
  });

  it('compares targets by conversation', () => {
    assert.ok(sameTarget({ channel: 'web', chat: 'a' }, { channel: 'web', chat: 'a' }));
    assert.ok(!sameTarget({ channel: 'web', chat: 'a' }, { channel: 'web', chat: 'a', thread: '1' }));
  });
});

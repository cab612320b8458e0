import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffDelay } from '../core/backoff.ts';
import { splitMessage } from './split-message.ts';

/** True when `text` ends inside a fenced code block (CommonMark: a closing fence has no info string). */
function endsInsideFence(text: string): boolean {
  let open: string | null = null;
  for (const line of text.split('\n')) {
    const match = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (!match) continue;
    const marker = match[1] ?? '';
    if (open === null) open = marker;
    else if (marker[0] === open[0] && marker.length >= open.length && (match[2] ?? '').trim() === '') open = null;
  }
  return open !== null;
}

describe('splitMessage', () => {
  it('returns a message that fits unchanged', () => {
    assert.deepEqual(splitMessage('hello', 5), ['hello']);
    assert.deepEqual(splitMessage('', 10), ['']);
  });

  it('splits on paragraph boundaries first', () => {
    const a = 'a'.repeat(30);
    const b = 'b'.repeat(30);
    const c = 'c'.repeat(30);
    assert.deepEqual(splitMessage(`${a}\n\n${b}\n\n${c}`, 70), [`${a}\n\n${b}`, c]);
  });

  it('prefers a paragraph break over a later line break, and a line break over a later space', () => {
    const text = `${'x'.repeat(40)}\n\n${'y'.repeat(20)}\n${'z'.repeat(20)} tail`;
    assert.deepEqual(splitMessage(text, 70)[0], 'x'.repeat(40));
    const lines = `${'x'.repeat(40)}\n${'y'.repeat(20)} ${'z'.repeat(20)}`;
    assert.deepEqual(splitMessage(lines, 50), ['x'.repeat(40), `${'y'.repeat(20)} ${'z'.repeat(20)}`]);
  });

  it('splits a long line on word boundaries and loses no word', () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`);
    const parts = splitMessage(words.join(' '), 50);
    assert.ok(parts.length > 1);
    for (const part of parts) {
      assert.ok(part.length <= 50, part);
      assert.ok(!part.startsWith(' ') && !part.endsWith(' '));
    }
    assert.equal(parts.join(' '), words.join(' '));
  });

  it('cuts a word longer than the limit, without splitting a surrogate pair', () => {
    assert.deepEqual(splitMessage('abcdefghij', 4), ['abcd', 'efgh', 'ij']);
    const emoji = '😀'.repeat(5);
    const parts = splitMessage(emoji, 3);
    for (const part of parts)
      assert.ok(!/[\uD800-\uDBFF]$/.test(part) && !/^[\uDC00-\uDFFF]/.test(part), JSON.stringify(part));
    assert.equal(parts.join(''), emoji);
  });

  it('closes a code fence at the end of a part and reopens it, with its language, in the next', () => {
    const code = Array.from({ length: 40 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const text = `Here is the code:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`;
    const parts = splitMessage(text, 200);
    assert.ok(parts.length > 2);
    for (const [i, part] of parts.entries()) {
      assert.ok(part.length <= 200, `part ${i} is ${part.length} long`);
      assert.ok(!endsInsideFence(part), `part ${i} leaves a fence open:\n${part}`);
    }
    assert.ok(parts[1]?.startsWith('```ts\n'), parts[1]);
    // Every line of code survives, in order.
    const kept = parts
      .join('\n')
      .split('\n')
      .filter((l) => l.startsWith('const '));
    assert.deepEqual(kept, code.split('\n'));
    assert.ok(parts.at(-1)?.endsWith('Done.'));
  });

  it('keeps every part within the limit and every fence balanced for mixed random text', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const pieces = ['word', 'longerword', ' ', ' ', '\n', '\n\n', '```py\n', '\n```\n', 'é', '🙂', '**bold**', '`x`'];
    for (let round = 0; round < 200; round += 1) {
      let text = '';
      const length = 50 + Math.floor(random() * 400);
      while (text.length < length) text += pieces[Math.floor(random() * pieces.length)];
      const limit = 40 + Math.floor(random() * 60);
      const parts = splitMessage(text, limit);
      for (const part of parts) {
        assert.ok(part.length <= limit, `part longer than ${limit}: ${JSON.stringify(part)}`);
        assert.ok(part.length > 0);
      }
      // When the whole text closes its fences, so does every part.
      if (!endsInsideFence(text)) {
        for (const part of parts)
          assert.ok(!endsInsideFence(part), `fence left open: ${JSON.stringify(part)} of ${JSON.stringify(text)}`);
      }
    }
  });

  it('refuses a limit that is not a positive integer', () => {
    assert.throws(() => splitMessage('abc', 0), RangeError);
  });
});

describe('backoffDelay', () => {
  it('grows exponentially with jitter in the upper half and stops at the cap', () => {
    assert.equal(
      backoffDelay(1, 1000, 60_000, () => 0),
      500,
    );
    assert.equal(
      backoffDelay(1, 1000, 60_000, () => 0.999999),
      1000,
    );
    assert.equal(
      backoffDelay(3, 1000, 60_000, () => 0),
      2000,
    );
    assert.equal(
      backoffDelay(30, 1000, 60_000, () => 0),
      30_000,
    );
    assert.equal(
      backoffDelay(30, 1000, 60_000, () => 0.999999),
      60_000,
    );
  });
});

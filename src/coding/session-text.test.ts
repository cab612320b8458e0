// The session's pure text helpers: the output preview, the permission preview and the idle timeout as said.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutputBuffer } from './output-buffer.ts';
import { idleText, outputPreview, permissionPreview } from './session-text.ts';

function buffer(...texts: string[]): OutputBuffer {
  const output = new OutputBuffer();
  texts.forEach((text, i) => output.push(i + 1, text));
  return output;
}

describe('session text', () => {
  it('the preview is the last 5 blocks, joined and trimmed', () => {
    assert.equal(outputPreview(buffer('1', '2', '3', '4', '5', '6 ')), '2\n3\n4\n5\n6');
    assert.equal(outputPreview(buffer()), '');
  });

  it('a preview over 500 characters keeps the tail, marked with "…"', () => {
    const preview = outputPreview(buffer('a'.repeat(300), 'b'.repeat(300)));
    assert.equal(preview, `…${'a'.repeat(199)}\n${'b'.repeat(300)}`);
  });

  it('the permission preview says how to answer, after the preview if there is one', () => {
    assert.equal(
      permissionPreview('Shall I?'),
      'Shall I?\n(permission requested: answer yes to allow, anything else to deny)',
    );
    assert.equal(permissionPreview(''), '(permission requested: answer yes to allow, anything else to deny)');
  });

  it('the idle timeout reads as whole minutes, or as a duration', () => {
    assert.equal(idleText(30 * 60_000), '30 min');
    assert.equal(idleText(12_000), '12s');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outputPreview, stripMarkdown, tailText } from './preview.ts';

describe('previews', () => {
  it('keeps the tail, marks the cut and does not start mid-word', () => {
    assert.equal(tailText('  short  ', 10), 'short');
    assert.equal(tailText('alpha beta gamma delta', 12), '…gamma delta');
    assert.equal(tailText('x'.repeat(50), 10), `…${'x'.repeat(9)}`, 'no boundary nearby: a plain cut');
    assert.equal(tailText('', 10), '');
  });

  it('strips Markdown decorations but keeps snake_case, code text and link targets', () => {
    const md = [
      '## Result',
      '**Fixed** the _flaky_ test in `src/parse_util.ts` (~~old~~ new).',
      '```ts',
      'const max_len = 3;',
      '```',
      '* see [the docs](https://example.test/a_b)',
      '> quoted',
    ].join('\n');
    assert.equal(
      stripMarkdown(md),
      [
        'Result',
        'Fixed the flaky test in src/parse_util.ts (old new).',
        '',
        'const max_len = 3;',
        '',
        '- see the docs (https://example.test/a_b)',
        'quoted',
      ].join('\n'),
    );
  });

  it('strips before cutting, so the tail holds the most text', () => {
    assert.equal(outputPreview(`${'**a** '.repeat(10)}**end**`, 7), '…a end', 'cutting first would leave only "end"');
  });
});

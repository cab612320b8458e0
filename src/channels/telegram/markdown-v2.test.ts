import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMarkdownV2 } from '../../../test/support/fake-telegram-markdown.ts';
import { escapeMarkdownV2, toMarkdownV2 } from './markdown-v2.ts';

/** Converts, parses the result the way Telegram does, and returns what the user sees. */
function render(text: string): {
  text: string;
  entities: { type: string; offset: number; length: number; language?: string }[];
} {
  const parsed = parseMarkdownV2(toMarkdownV2(text));
  assert.ok(parsed.ok, `Telegram would refuse ${JSON.stringify(toMarkdownV2(text))}: ${parsed.ok ? '' : parsed.error}`);
  return parsed;
}

describe('the fake parser (sanity: it refuses what Telegram refuses)', () => {
  it('refuses unescaped reserved characters and unclosed entities', () => {
    assert.deepEqual(parseMarkdownV2('Done.'), {
      ok: false,
      error: "Character '.' is reserved and must be escaped with the preceding '\\'",
    });
    assert.match(
      (parseMarkdownV2('*bold') as { error: string }).error,
      /Can't find end of Bold entity at byte offset 0/,
    );
    assert.match((parseMarkdownV2('é `code') as { error: string }).error, /Code entity at byte offset 3/);
    assert.ok(parseMarkdownV2('a \\. b *c* `d\\`` ```js\nx\n```').ok);
  });
});

describe('toMarkdownV2', () => {
  it('escapes every reserved character so plain text shows exactly as written', () => {
    const text = 'Cost: $1.50 (est.) - 3+4=7 #tag {x} [y] a|b ~z~ > quote! under_score back\\slash star* tick` 100%';
    assert.deepEqual(render(text), { ok: true, text, entities: [] });
    assert.equal(escapeMarkdownV2('a.b'), 'a\\.b');
  });

  it('shows the notification templates word for word', () => {
    for (const text of [
      '✅ [fix-auth] Completed\n   📁 /home/me/project\n   💰 $0.0123\n\nAll tests pass.',
      '❌ [fix-auth] Failed\n   📁 /srv/app-1\n   📝 "Refactor the *auth* module…"\n   ⚠️ exit code 1 (SIGTERM)',
      '🔔 [x_y] Claude asks:\nShould I use `pnpm` or npm? Options: a) keep, b) switch.',
      '⏱️ Session a.b [k9-x] running for 12m 3s\n   Use claude_fg to check on it, or claude_kill to stop it.',
    ]) {
      const visible = render(text).text;
      assert.equal(visible, text.replace('`pnpm`', 'pnpm'), text);
    }
  });

  it('keeps fenced code blocks with their language, and their content verbatim', () => {
    const code = 'const re = /a\\.b`c`/;\nconsole.log("*not bold*", `${x}`);';
    const result = render(`Before:\n\`\`\`ts\n${code}\n\`\`\`\nAfter.`);
    assert.equal(result.text, `Before:\n${code}\nAfter.`);
    const pre = result.entities.find((e) => e.type === 'pre');
    assert.equal(pre?.language, 'ts');
    assert.equal(result.text.slice(pre?.offset, (pre?.offset ?? 0) + (pre?.length ?? 0)), code);
  });

  it('keeps inline code and **bold**, and turns # headings into bold', () => {
    const result = render('## Summary\nRun `npm test -- --watch` then **ship it.** Done!');
    assert.equal(result.text, 'Summary\nRun npm test -- --watch then ship it. Done!');
    assert.deepEqual(
      result.entities.map((e) => [e.type, result.text.slice(e.offset, e.offset + e.length)]),
      [
        ['bold', 'Summary'],
        ['code', 'npm test -- --watch'],
        ['bold', 'ship it.'],
      ],
    );
    assert.equal(render('use ``a`b`` here').text, 'use a`b here');
  });

  it('shows malformed markup literally instead of failing', () => {
    for (const text of [
      '**unclosed bold',
      'a `stray tick',
      '```\nunclosed fence',
      '** spaced **',
      '****',
      '`` ``',
      '```\n```',
      '__init__ and *x*',
    ]) {
      assert.equal(render(text).text, text, text);
    }
  });

  it('always produces text Telegram accepts (random reserved-character soup)', () => {
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const alphabet = [
      '*',
      '**',
      '_',
      '`',
      '```',
      '```py\n',
      '\n```',
      '\\',
      '.',
      '!',
      '[',
      ']',
      '(',
      ')',
      '#',
      '# ',
      '\n',
      ' ',
      'a',
      'é',
      '|',
      '~',
      '>',
      '-',
    ];
    for (let round = 0; round < 500; round += 1) {
      let text = '';
      const length = 1 + Math.floor(random() * 40);
      for (let i = 0; i < length; i += 1) text += alphabet[Math.floor(random() * alphabet.length)];
      const parsed = parseMarkdownV2(toMarkdownV2(text));
      assert.ok(
        parsed.ok,
        `${JSON.stringify(text)} → ${JSON.stringify(toMarkdownV2(text))}: ${parsed.ok ? '' : parsed.error}`,
      );
    }
  });
});

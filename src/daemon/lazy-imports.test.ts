import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

/** The client libraries a daemon loads only when their channel, integration or store is configured. */
const OPTIONAL = ['discord.js', '@slack/bolt', 'grammy', '@linear/sdk', 'octokit', '@octokit/auth-app', 'pg'];

describe('the daemon module graph', () => {
  it('loads no chat, Linear, GitHub or PostgreSQL client library until one is configured', () => {
    // A fresh process imports src/main.ts and lists every bare specifier resolved meanwhile.
    const main = new URL('../main.ts', import.meta.url).href;
    const script = `
      import { registerHooks } from 'node:module';
      const seen = new Set();
      registerHooks({ resolve(specifier, context, next) { seen.add(specifier); return next(specifier, context); } });
      await import(${JSON.stringify(main)});
      process.stdout.write(JSON.stringify([...seen]));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    const seen = new Set(JSON.parse(out) as string[]);
    assert.ok(seen.has('fastify'), 'the hook saw the daemon load its own libraries');
    assert.deepEqual(
      OPTIONAL.filter((name) => seen.has(name)),
      [],
    );
  });
});

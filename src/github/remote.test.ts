import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstLine, pullRequestBody, sessionPageUrl } from './pr-body.ts';
import { parseRepoName, repoFromRemoteUrl, sessionBranch } from './remote.ts';
import { signBody, verifySignature } from './webhooks/signature.ts';

describe('repoFromRemoteUrl', () => {
  const cases: [string, string | undefined][] = [
    ['https://github.com/acme/widgets.git', 'acme/widgets'],
    ['https://github.com/acme/widgets', 'acme/widgets'],
    ['https://github.com/acme/widgets/', 'acme/widgets'],
    ['https://x-access-token@github.com/acme/widgets.git', 'acme/widgets'],
    ['http://127.0.0.1:8080/git/acme/widgets.git', 'acme/widgets'],
    ['https://ghe.example/api/acme/widgets.git', 'acme/widgets'],
    ['ssh://git@github.com/acme/widgets.git', 'acme/widgets'],
    ['ssh://git@github.com:22/acme/my.repo.git', 'acme/my.repo'],
    ['git@github.com:acme/widgets.git', 'acme/widgets'],
    ['git@github.com:acme/widgets', 'acme/widgets'],
    ['/srv/git/widgets.git', undefined],
    ['file:///srv/git/acme/widgets.git', undefined],
    ['https://github.com/widgets', undefined],
    ['not a url', undefined],
  ];
  for (const [url, expected] of cases)
    it(`${url} → ${expected ?? 'none'}`, () => {
      const ref = repoFromRemoteUrl(url);
      assert.equal(ref ? `${ref.owner}/${ref.repo}` : undefined, expected);
    });

  it('parses github.repo', () => {
    assert.deepEqual(parseRepoName('acme/widgets'), { owner: 'acme', repo: 'widgets' });
    assert.equal(parseRepoName('acme'), undefined);
    assert.equal(parseRepoName('a/b/c'), undefined);
  });
});

describe('sessionBranch', () => {
  it('names the branch after the session, in what git accepts', () => {
    assert.equal(sessionBranch('fix-login'), 'switchboard/fix-login');
    assert.equal(sessionBranch('Fix the login bug!'), 'switchboard/Fix-the-login-bug');
    assert.equal(sessionBranch('a..b~c^d:e?f*g[h\\i'), 'switchboard/a.b-c-d-e-f-g-h-i');
    assert.equal(sessionBranch('.hidden.lock'), 'switchboard/hidden');
    assert.equal(sessionBranch('x/y'), 'switchboard/x-y');
    assert.equal(sessionBranch('???'), 'switchboard/session');
    assert.ok(sessionBranch('n'.repeat(300)).length <= 'switchboard/'.length + 100);
  });
});

describe('pull request text', () => {
  it('takes the first non-empty line of the prompt as the title', () => {
    assert.equal(firstLine('\n  Fix the login bug  \nmore detail', 'fallback'), 'Fix the login bug');
    assert.equal(firstLine('   \n', 'fallback'), 'fallback');
    assert.equal(firstLine('x'.repeat(100), 'f').length, 72);
  });

  it('summarizes the session: prompt, last output, cost and the live page', () => {
    const body = pullRequestBody({
      id: 'abc 1',
      name: 'fix-login',
      harness: 'claude',
      prompt: 'Fix the login bug\nwith a test',
      costUsd: 0.4567,
      lastOutput: ['Fixed it: the session cookie was not renewed.'],
      pageBase: 'https://sb.example/',
    });
    assert.match(body, /\*\*fix-login\*\*/);
    assert.match(body, /> Fix the login bug\n> with a test/);
    assert.match(body, /Fixed it: the session cookie was not renewed\./);
    assert.match(body, /\$0\.46/);
    assert.match(body, /https:\/\/sb\.example\/#session=abc%201/);
    assert.equal(sessionPageUrl(undefined, 'x'), undefined);
    const none = pullRequestBody({
      id: 'x',
      name: 'n',
      harness: 'codex',
      prompt: 'p',
      costUsd: 0,
      lastOutput: [],
      pageBase: undefined,
    });
    assert.match(none, /_\(no output\)_/);
    assert.doesNotMatch(none, /Live session/);
  });
});

describe('webhook signature', () => {
  const secret = 'shh';
  const body = Buffer.from('{"action":"submitted"}');
  it('accepts the signature of the exact bytes', () => {
    assert.equal(verifySignature(secret, body, signBody(secret, body)), true);
    assert.equal(verifySignature(secret, body, signBody(secret, body).toUpperCase().replace('SHA256', 'sha256')), true);
  });
  it('refuses a forged, missing, malformed or other-body signature', () => {
    assert.equal(verifySignature(secret, body, signBody('other', body)), false);
    assert.equal(verifySignature(secret, body, undefined), false);
    assert.equal(verifySignature(secret, body, 'sha256=abc'), false);
    assert.equal(verifySignature(secret, body, `sha1=${'0'.repeat(40)}`), false);
    assert.equal(verifySignature(secret, Buffer.from('{"action":"submitted" }'), signBody(secret, body)), false);
  });
});

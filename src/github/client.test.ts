// The Octokit client against the fake GitHub: a token, or a GitHub App whose installation token is minted once and
// reused (auth-app caches it until shortly before it expires).
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FakeGithub } from '../../test/support/fake-github.ts';
import { startFakeGithub } from '../../test/support/fake-github.ts';
import { githubSchema } from '../core/config-github.ts';
import { AppError } from '../core/errors.ts';
import { silentLogger } from '../core/logger.ts';
import { resolveGithubAuth } from './auth.ts';
import { GithubRest } from './client.ts';

describe('GithubRest', () => {
  let github: FakeGithub;
  before(async () => {
    github = await startFakeGithub();
  });
  after(async () => {
    await github.close();
  });

  it('with a token: reads the default branch, opens a PR and finds it by its head branch', async () => {
    const auth = resolveGithubAuth(githubSchema.parse({ enabled: true }), { GITHUB_TOKEN: 'ghp_t' });
    assert.equal(auth.kind, 'token');
    if (auth.kind !== 'token') return;
    const api = new GithubRest(auth, `${github.url}/`, silentLogger());
    github.setDefaultBranch('acme/widgets', 'trunk');
    const repo = { owner: 'acme', repo: 'widgets' };
    assert.equal(await api.defaultBranch(repo), 'trunk');
    assert.equal(await api.findOpenPull(repo, 'feature'), undefined);
    const pull = await api.createPull(repo, { title: 't', body: 'b', head: 'feature', base: 'trunk', draft: false });
    assert.deepEqual(await api.findOpenPull(repo, 'feature'), pull);
    assert.equal(await api.findOpenPull(repo, 'other'), undefined);
    await assert.rejects(
      api.createPull(repo, { title: 't', body: 'b', head: 'feature', base: 'trunk', draft: false }),
      (error: unknown) => {
        assert.ok(error instanceof AppError);
        assert.equal(error.kind, 'invalid_input');
        assert.match(error.message, /GitHub refused to open the pull request \(422\).*A pull request already exists/);
        return true;
      },
    );
    assert.equal(await api.token(), 'ghp_t');
    const list = github.requests.find((r) => r.method === 'GET' && r.path.endsWith('/pulls'));
    assert.match(list?.query ?? '', /head=acme%3Afeature/);
    assert.match(list?.query ?? '', /state=open/);
  });

  it('as a GitHub App: mints an installation token once and uses it for API calls and pushes', async () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const auth = resolveGithubAuth(
      githubSchema.parse({ enabled: true, app: { appId: 123, installationId: 456, privateKeyEnv: 'APP_KEY' } }),
      { APP_KEY: privateKey.replace(/\n/g, '\\n') },
    );
    assert.equal(auth.kind, 'app');
    if (auth.kind !== 'app') return;
    const api = new GithubRest(auth, github.url, silentLogger());
    const before = github.tokens.length;
    assert.equal(await api.defaultBranch({ owner: 'acme', repo: 'gadgets' }), 'main');
    const token = await api.token();
    assert.equal(await api.token(), token, 'cached');
    assert.equal(github.tokens.length, before + 1, 'one installation token minted');
    const mint = github.requests.find((r) => r.path === '/app/installations/456/access_tokens');
    assert.match(String(mint?.headers.authorization), /^bearer /i, 'minted with the App JWT');
    const repoCall = github.requests.find((r) => r.path === '/repos/acme/gadgets');
    assert.equal(String(repoCall?.headers.authorization).toLowerCase(), `token ${token}`);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError } from './cli-error.ts';
import { resolveConnection } from './client.ts';

const badInput = (pattern: RegExp) => (e: unknown) =>
  e instanceof CliError && e.exitCode === 2 && pattern.test(e.message);

describe('resolveConnection', () => {
  it('refuses an invalid --url as bad input (exit 2) naming the flag, instead of calling the daemon "not running"', () => {
    assert.throws(() => resolveConnection({ url: 'not a url', env: {} }), badInput(/--url "not a url" is not a URL/));
    assert.throws(
      () => resolveConnection({ url: 'localhost:18789', env: {} }),
      badInput(/--url "localhost:18789": expected an http/),
    );
    assert.throws(() => resolveConnection({ url: 'ftp://127.0.0.1:21', env: {} }), badInput(/--url/));
    assert.throws(() => resolveConnection({ url: 'http://127.0.0.1:99999', env: {} }), badInput(/not a URL/));
  });

  it('refuses an invalid $SWITCHBOARD_URL the same way, naming the variable', () => {
    assert.throws(
      () => resolveConnection({ env: { SWITCHBOARD_URL: '127.0.0.1 18789' } }),
      badInput(/SWITCHBOARD_URL/),
    );
  });

  it('takes a valid URL without its trailing slash', () => {
    assert.equal(resolveConnection({ url: 'http://127.0.0.1:4000/', env: {} }).url, 'http://127.0.0.1:4000');
    assert.equal(
      resolveConnection({ url: 'https://switchboard.example', env: { SWITCHBOARD_URL: 'nonsense' } }).url,
      'https://switchboard.example',
    );
  });

  it('says whether the daemon is on this machine: found through the home, or at a loopback URL', () => {
    const home = '/nonexistent-switchboard-home';
    assert.equal(resolveConnection({ home, env: {} }).local, true);
    assert.equal(resolveConnection({ home, url: 'http://127.0.0.1:4000', env: {} }).local, true);
    assert.equal(resolveConnection({ home, url: 'http://[::1]:4000', env: {} }).local, true);
    assert.equal(resolveConnection({ home, url: 'http://localhost:4000', env: {} }).local, true);
    assert.equal(resolveConnection({ home, url: 'https://switchboard.example', env: {} }).local, false);
    assert.equal(resolveConnection({ home, env: { SWITCHBOARD_URL: 'http://10.0.0.7:18789' } }).local, false);
  });
});

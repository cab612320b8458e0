import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Command } from 'commander';
import type { FakeLinear } from '../../test/support/fake-linear.ts';
import { FAKE_OAUTH_CLIENT, startFakeLinear } from '../../test/support/fake-linear.ts';
import { freePort } from '../../test/support/ports.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { systemClock } from '../core/clock.ts';
import { addLinearCommands } from './linear-commands.ts';

describe('switchboard linear (CLI)', () => {
  let fake: FakeLinear;
  let home: ReturnType<typeof tempDir>;
  let port: number;

  beforeEach(async () => {
    fake = await startFakeLinear();
    home = tempDir('sb-linear-cli-');
    port = await freePort();
    const config = {
      gateway: { port },
      linear: {
        enabled: true,
        apiUrl: fake.graphqlUrl,
        oauth: {
          clientId: FAKE_OAUTH_CLIENT.clientId,
          clientSecretEnv: 'TEST_LINEAR_CLIENT_SECRET',
          authorizeUrl: fake.authorizeUrl,
          tokenUrl: fake.tokenUrl,
        },
      },
    };
    writeFileSync(join(home.path, 'config.json5'), JSON.stringify(config));
  });
  afterEach(async () => {
    await fake.close();
    home.remove();
  });

  async function run(
    args: string[],
    env: NodeJS.ProcessEnv,
    out: string[],
    onLine: (line: string) => void = () => {},
  ): Promise<void> {
    const program = new Command('switchboard').option('--home <dir>').exitOverride();
    const print = (line: string): void => {
      out.push(line);
      onLine(line);
    };
    addLinearCommands(program, { out: print, env: { ...env, SWITCHBOARD_HOME: home.path }, clock: systemClock() });
    await program.parseAsync(['--home', home.path, ...args], { from: 'user' });
  }

  it('status names the token source without showing the token, and counts webhook deliveries', async () => {
    const out: string[] = [];
    await run(['linear', 'status', '--check'], { LINEAR_API_KEY: 'lin_api_fake' }, out);
    const text = out.join('\n');
    assert.match(text, /token: env LINEAR_API_KEY \(personal API key\), no expiry/);
    assert.match(text, /oauth: not connected/);
    assert.match(text, /webhook deliveries: 0 pending/);
    assert.match(text, /check: ok — switchboard in Acme/);
    assert.doesNotMatch(text, /lin_api_fake/);
    const json: string[] = [];
    await run(['linear', 'status', '--json'], {}, json);
    assert.equal((JSON.parse(json.join('')) as { token: unknown }).token, null);
  });

  it('connect prints the authorize URL, takes the callback on a one-shot listener, and status then shows OAuth', async () => {
    const out: string[] = [];
    const env = { TEST_LINEAR_CLIENT_SECRET: FAKE_OAUTH_CLIENT.clientSecret };
    // Acts as the browser once the authorize URL is printed.
    const { promise: authorizeUrl, resolve: printedUrl } = Promise.withResolvers<string>();
    const browser = (async () => (await fetch(await authorizeUrl, { redirect: 'follow' })).status)();
    await run(
      ['linear', 'connect', '--timeout', '20'],
      env,
      out,
      (line) => line.startsWith('http') && printedUrl(line),
    );
    assert.equal(await browser, 200);
    assert.match(out.join('\n'), /Linear connected to Acme as switchboard \(callback received by the command line\)/);
    assert.match(
      new URL(out.find((l) => l.startsWith('http')) ?? '').searchParams.get('redirect_uri') ?? '',
      new RegExp(`127\\.0\\.0\\.1:${port}/linear/oauth/callback$`),
    );
    const status: string[] = [];
    await run(['linear', 'status'], env, status);
    assert.match(
      status.join('\n'),
      /token: oauth \(default\) \(OAuth access token\), expires .*refreshed automatically/,
    );
  });
});

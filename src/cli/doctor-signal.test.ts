import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FakeSignalCli } from '../../test/support/fake-signal-cli.ts';
import { startFakeSignalCli } from '../../test/support/fake-signal-cli.ts';
import { signalChannelSchema } from '../core/config-signal.ts';
import { signalChecks } from './doctor-signal.ts';

describe('doctor: Signal', () => {
  let fake: FakeSignalCli;
  before(async () => {
    fake = await startFakeSignalCli({ accounts: ['+15550000001'] });
  });
  after(() => fake.close());

  it('checks the daemon, the account it serves and the allow-list of each account', async () => {
    const section = signalChannelSchema.parse({
      enabled: true,
      url: fake.url,
      allowedNumbers: ['+15551110000'],
      accounts: {
        ok: { account: '+15550000001' },
        other: { account: '+15550000009' },
        open: { account: '+15550000001', allowedNumbers: [] },
        gone: { url: 'http://127.0.0.1:9' },
      },
    });
    const checks = await signalChecks(section);
    assert.deepEqual(
      checks.map((c) => [c.label, c.status]),
      [
        ['Signal (ok)', 'ok'],
        ['Signal (other)', 'fail'],
        ['Signal (open)', 'warn'],
        ['Signal (gone)', 'fail'],
      ],
    );
    assert.match(checks[1]?.detail ?? '', /no account \+15550000009 \(channels\.signal\.accounts\.other\.account\)/);
    assert.match(checks[2]?.detail ?? '', /channels\.signal\.accounts\.open\.allowedNumbers is empty/);
    assert.match(checks[3]?.detail ?? '', /not reachable at http:\/\/127\.0\.0\.1:9/);
    assert.deepEqual(await signalChecks(signalChannelSchema.parse({})), [], 'nothing when disabled');
  });
});

// The daemon refuses to run Linear without a webhook signing secret (unsigned webhooks are never taken), and runs it
// with one: the webhook route answers and the pipeline is listed over RPC.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startDaemon } from '../../src/main.ts';
import type { FakeLinear } from '../support/fake-linear.ts';
import { startFakeLinear } from '../support/fake-linear.ts';
import { postWebhook } from '../support/linear-e2e.ts';
import { linearFixture, TEST_WEBHOOK_SECRET } from '../support/linear-webhook-fixtures.ts';
import { ScriptedHarness } from '../support/scripted-harness.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('the daemon with linear.enabled', { timeout: 60_000 }, () => {
  const dir = tempDir('sb-linear-daemon-');
  let fake: FakeLinear;
  const harnesses = () => ({
    claude: new ScriptedHarness('claude'),
    codex: new ScriptedHarness('codex', false),
    gemini: new ScriptedHarness('gemini', false),
  });

  before(async () => {
    fake = await startFakeLinear();
  });
  after(async () => {
    await fake.close();
    dir.remove();
  });

  it('refuses to start without a webhook signing secret, naming the key', async () => {
    await assert.rejects(
      startDaemon({
        home: join(dir.path, 'a'),
        env: {},
        overrides: { 'gateway.port': 0, workspaces: [dir.path], 'log.level': 'silent', 'linear.enabled': true },
        harnesses: harnesses(),
      }),
      /linear\.webhookSecret: Linear is enabled but no webhook signing secret is configured/,
    );
  });

  it('takes signed webhooks at /linear/webhook and lists the pipeline over RPC', async () => {
    const daemon = await startDaemon({
      home: join(dir.path, 'b'),
      env: { LINEAR_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET },
      overrides: {
        'gateway.port': 0,
        workspaces: [dir.path],
        'log.level': 'silent',
        'linear.enabled': true,
        'linear.apiUrl': fake.graphqlUrl,
        'linear.apiKey': 'lin_api_fake',
        'linear.triage.enabled': false,
      },
      harnesses: harnesses(),
    });
    try {
      assert.equal(await postWebhook(daemon.url, linearFixture('issue-create')), 200);
      const response = await fetch(`${daemon.url}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'linear.dispatches', params: {} }),
      });
      const reply = (await response.json()) as { result?: { dispatches: unknown[]; planning: unknown[] } };
      assert.deepEqual(reply.result?.dispatches, []);
      assert.deepEqual(reply.result?.planning, []);
      assert.ok(daemon.services.codeRunner, 'code_run has its backend');
    } finally {
      await daemon.stop();
    }
  });
});

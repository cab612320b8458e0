import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createLogger } from './logger.ts';

describe('createLogger', () => {
  it('never writes a secret value, wherever the known secret keys appear', () => {
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const logger = createLogger({ level: 'info', destination: stream });
    logger.info(
      {
        token: 'T1',
        apiKey: 'K1',
        req: { headers: { authorization: 'Bearer A1' } },
        channels: { telegram: { botToken: 'B1' } },
        linear: { apiKey: 'K2', clientSecret: 'C1', webhookSecret: 'W1' },
        inference: { providers: [{ kind: 'anthropic', apiKey: 'K3' }] },
        harness: { env: { ANTHROPIC_API_KEY: 'E1' } },
      },
      'config',
    );
    for (const secret of ['T1', 'K1', 'A1', 'B1', 'K2', 'C1', 'W1', 'K3', 'E1'])
      assert.ok(!text.includes(`"${secret}"`), `${secret} leaked: ${text}`);
    assert.match(text, /\[redacted\]/);
  });
});

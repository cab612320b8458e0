import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inferenceSchema, providerId } from './config-inference.ts';
import { formatZodError } from './errors.ts';

function issues(input: unknown): string {
  const parsed = inferenceSchema.safeParse(input);
  assert.equal(parsed.success, false, 'expected the section to be rejected');
  return parsed.success ? '' : formatZodError(parsed.error, 'inference');
}

describe('inference config section', () => {
  it('defaults to no provider, a 120 s time limit and no SDK retries', () => {
    const section = inferenceSchema.parse({});
    assert.deepEqual(section, { providers: [], timeoutMs: 120_000, retriesPerProvider: 0 });
  });

  it('fills provider defaults and keeps the order', () => {
    const section = inferenceSchema.parse({
      providers: [
        { kind: 'anthropic', model: 'claude-sonnet-4-5' },
        { kind: 'openai', model: 'gpt-5', api: 'chat', apiKeyEnv: 'WORK_OPENAI_KEY', timeoutMs: 30_000 },
        {
          id: 'local',
          kind: 'openai-compatible',
          model: 'llama3.2',
          baseUrl: 'http://127.0.0.1:11434/v1',
          stream: true,
        },
      ],
    });
    assert.deepEqual(section.providers.map(providerId), ['anthropic', 'openai', 'local']);
    assert.equal(section.providers[0]?.stream, false);
    assert.equal(section.providers[1]?.api, 'chat');
    assert.equal(section.providers[1]?.timeoutMs, 30_000);
    assert.equal(section.providers[2]?.stream, true);
  });

  it('rejects apiKey together with apiKeyEnv, naming the field', () => {
    assert.match(
      issues({ providers: [{ kind: 'anthropic', model: 'm', apiKey: 'k', apiKeyEnv: 'K' }] }),
      /inference\.providers\.0\.apiKeyEnv: set apiKey or apiKeyEnv, not both/,
    );
  });

  it('requires a base URL for openai-compatible', () => {
    assert.match(
      issues({ providers: [{ kind: 'openai-compatible', model: 'llama' }] }),
      /inference\.providers\.0\.baseUrl: required for kind openai-compatible/,
    );
  });

  it('accepts `api` only for kind openai', () => {
    assert.match(
      issues({ providers: [{ kind: 'anthropic', model: 'm', api: 'chat' }] }),
      /inference\.providers\.0\.api: only for kind openai/,
    );
    assert.match(
      issues({ providers: [{ kind: 'openai', model: 'm', api: 'completions' }] }),
      /inference\.providers\.0\.api/,
    );
  });

  it('rejects two providers with the same id (an unnamed one is known by its kind)', () => {
    const text = issues({
      providers: [
        { kind: 'openai', model: 'a' },
        { kind: 'openai', model: 'b' },
      ],
    });
    assert.match(text, /inference\.providers\.1\.id: provider id 'openai' is already used by providers\.0/);
    inferenceSchema.parse({
      providers: [
        { kind: 'openai', model: 'a' },
        { id: 'openai-mini', kind: 'openai', model: 'b' },
      ],
    });
  });

  it('rejects unknown keys, kinds and bad values', () => {
    assert.match(issues({ providers: [{ kind: 'mistral', model: 'm' }] }), /inference\.providers\.0\.kind/);
    assert.match(issues({ providers: [{ kind: 'openai', model: 'm', temperature: 1 }] }), /temperature/);
    assert.match(issues({ providers: [{ kind: 'openai', model: '' }] }), /inference\.providers\.0\.model/);
    assert.match(issues({ timeoutMs: 0 }), /inference\.timeoutMs/);
    assert.match(issues({ retriesPerProvider: -1 }), /inference\.retriesPerProvider/);
    assert.match(
      issues({ providers: [{ kind: 'openai', model: 'm', baseUrl: 'not a url' }] }),
      /inference\.providers\.0\.baseUrl/,
    );
  });
});

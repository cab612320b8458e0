import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inferenceSchema } from '../core/config-inference.ts';
import { AppError } from '../core/errors.ts';
import { resolveApiKey, resolveProviders } from './providers.ts';

const parse = (input: unknown) => inferenceSchema.parse(input);

describe('resolveApiKey', () => {
  it('prefers apiKey, then apiKeyEnv, then the kind default', () => {
    const [literal, named, fallback] = parse({
      providers: [
        { id: 'a', kind: 'anthropic', model: 'm', apiKey: 'literal-key' },
        { id: 'b', kind: 'anthropic', model: 'm', apiKeyEnv: 'MY_KEY' },
        { id: 'c', kind: 'anthropic', model: 'm' },
      ],
    }).providers;
    const env = { MY_KEY: ' from-my-key ', ANTHROPIC_API_KEY: 'from-default' };
    assert.equal(resolveApiKey(literal!, 0, env), 'literal-key');
    assert.equal(resolveApiKey(named!, 1, env), 'from-my-key');
    assert.equal(resolveApiKey(fallback!, 2, env), 'from-default');
  });

  it('needs no key for openai-compatible unless apiKeyEnv names one', () => {
    const [open, keyed] = parse({
      providers: [
        { id: 'ollama', kind: 'openai-compatible', model: 'llama', baseUrl: 'http://127.0.0.1:11434/v1' },
        {
          id: 'vllm',
          kind: 'openai-compatible',
          model: 'llama',
          baseUrl: 'http://127.0.0.1:8000/v1',
          apiKeyEnv: 'VLLM_KEY',
        },
      ],
    }).providers;
    assert.equal(resolveApiKey(open!, 0, {}), undefined);
    assert.throws(() => resolveApiKey(keyed!, 1, {}), /environment variable VLLM_KEY is not set/);
  });

  it('names the missing variable and the config field', () => {
    const config = parse({
      providers: [
        { kind: 'openai-compatible', model: 'x', baseUrl: 'http://127.0.0.1:1/v1' },
        { id: 'work', kind: 'openai', model: 'gpt', apiKeyEnv: 'WORK_OPENAI_KEY' },
      ],
    });
    assert.throws(
      () => resolveProviders(config, { env: { WORK_OPENAI_KEY: '  ' } }),
      (error: unknown) =>
        error instanceof AppError &&
        error.kind === 'invalid_input' &&
        error.field === 'inference.providers.1.apiKeyEnv' &&
        error.message ===
          "Inference provider 'work': environment variable WORK_OPENAI_KEY is not set (apiKeyEnv names WORK_OPENAI_KEY).",
    );
    const google = parse({ providers: [{ kind: 'google', model: 'gemini' }] });
    assert.throws(
      () => resolveProviders(google, { env: {} }),
      (error: unknown) =>
        error instanceof AppError &&
        error.field === 'inference.providers.0.apiKey' &&
        /GOOGLE_GENERATIVE_AI_API_KEY is not set/.test(error.message),
    );
  });
});

describe('resolveProviders', () => {
  it('builds one model per provider with its wire API, time limit and options', () => {
    const config = parse({
      timeoutMs: 60_000,
      providers: [
        { kind: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'k1' },
        { kind: 'openai', model: 'gpt-5', apiKey: 'k2' },
        {
          id: 'openai-chat',
          kind: 'openai',
          model: 'gpt-4.1',
          api: 'chat',
          apiKey: 'k3',
          timeoutMs: 5_000,
          stream: true,
        },
        {
          id: 'ollama',
          kind: 'openai-compatible',
          model: 'llama3.2',
          baseUrl: 'http://127.0.0.1:11434/v1',
          maxOutputTokens: 512,
        },
        { kind: 'google', model: 'gemini-2.5-flash', apiKey: 'k4' },
      ],
    });
    const providers = resolveProviders(config, { env: {} });
    assert.deepEqual(
      providers.map((p) => [p.id, p.kind, p.api, p.model, p.timeoutMs, p.stream, p.maxOutputTokens, p.secret]),
      [
        ['anthropic', 'anthropic', 'messages', 'claude-sonnet-4-5', 60_000, false, undefined, 'k1'],
        ['openai', 'openai', 'responses', 'gpt-5', 60_000, false, undefined, 'k2'],
        ['openai-chat', 'openai', 'chat', 'gpt-4.1', 5_000, true, undefined, 'k3'],
        ['ollama', 'openai-compatible', 'chat', 'llama3.2', 60_000, false, 512, undefined],
        ['google', 'google', 'generateContent', 'gemini-2.5-flash', 60_000, false, undefined, 'k4'],
      ],
    );
    const model = (i: number) => providers[i]?.languageModel as { provider: string; modelId: string };
    assert.deepEqual(
      [model(0).provider, model(1).provider, model(2).provider, model(3).provider, model(4).provider],
      ['anthropic.messages', 'openai.responses', 'openai.chat', 'ollama.chat', 'google.generative-ai'],
    );
    assert.equal(model(3).modelId, 'llama3.2');
  });

  it('is empty with no provider', () => {
    assert.deepEqual(resolveProviders(parse({}), { env: {} }), []);
  });
});

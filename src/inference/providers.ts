// Turns the configured provider list into AI SDK language models: one provider instance per entry, with its API key
// resolved once (from `apiKey`, `apiKeyEnv` or the kind's usual variable) so a missing key fails at startup, naming it.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogle } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import type { InferenceConfig, ProviderConfig } from '../core/config-inference.ts';
import { DEFAULT_API_KEY_ENV, providerId } from '../core/config-inference.ts';
import { invalidInput } from '../core/errors.ts';

/** A configured provider, ready to call. */
export interface ResolvedProvider {
  /** The id logs, errors and results name it by. */
  id: string;
  kind: ProviderConfig['kind'];
  /** The configured model id. */
  model: string;
  /** Which wire API the model speaks (for logs): messages, responses, chat, generateContent. */
  api: string;
  languageModel: LanguageModel;
  stream: boolean;
  timeoutMs: number;
  maxOutputTokens: number | undefined;
  /** The API key, kept only to scrub it from error text before it is logged or shown. */
  secret: string | undefined;
}

export interface ResolveOptions {
  /** Where `apiKeyEnv` is looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** A fetch for every provider (tests); default the global fetch. */
  fetch?: typeof globalThis.fetch;
}

/**
 * Resolves the API key of provider `index`: `apiKey`, else the variable named by `apiKeyEnv`, else the kind's usual
 * variable (none for openai-compatible). Throws an invalid_input AppError naming the variable and the config field when a
 * required key is missing; returns undefined when the kind needs none.
 */
export function resolveApiKey(provider: ProviderConfig, index: number, env: NodeJS.ProcessEnv): string | undefined {
  if (provider.apiKey !== undefined) return provider.apiKey;
  const name = provider.apiKeyEnv ?? DEFAULT_API_KEY_ENV[provider.kind];
  if (name === undefined) return undefined;
  const value = env[name];
  if (value !== undefined && value.trim() !== '') return value.trim();
  const field = `inference.providers.${index}.${provider.apiKeyEnv !== undefined ? 'apiKeyEnv' : 'apiKey'}`;
  const how =
    provider.apiKeyEnv !== undefined
      ? `apiKeyEnv names ${name}`
      : `${name} is the default for kind ${provider.kind}; set apiKey or apiKeyEnv to use another`;
  throw invalidInput(
    `Inference provider '${providerId(provider)}': environment variable ${name} is not set (${how}).`,
    field,
  );
}

function buildModel(
  provider: ProviderConfig,
  apiKey: string | undefined,
  fetch: typeof globalThis.fetch | undefined,
): { languageModel: LanguageModel; api: string } {
  const common = {
    ...(provider.baseUrl !== undefined ? { baseURL: provider.baseUrl } : {}),
    ...(fetch ? { fetch } : {}),
  };
  const id = providerId(provider);
  switch (provider.kind) {
    case 'anthropic':
      return {
        languageModel: createAnthropic({ ...common, ...(apiKey !== undefined ? { apiKey } : {}) }).messages(
          provider.model,
        ),
        api: 'messages',
      };
    case 'openai': {
      const openai = createOpenAI({ ...common, ...(apiKey !== undefined ? { apiKey } : {}) });
      return provider.api === 'chat'
        ? { languageModel: openai.chat(provider.model), api: 'chat' }
        : { languageModel: openai.responses(provider.model), api: 'responses' };
    }
    case 'openai-compatible': {
      // baseUrl is required for this kind by the schema.
      const compatible = createOpenAICompatible({
        ...common,
        baseURL: provider.baseUrl ?? '',
        name: id,
        includeUsage: true,
        ...(apiKey !== undefined ? { apiKey } : {}),
      });
      return { languageModel: compatible.chatModel(provider.model), api: 'chat' };
    }
    case 'google':
      return {
        languageModel: createGoogle({ ...common, ...(apiKey !== undefined ? { apiKey } : {}) }).languageModel(
          provider.model,
        ),
        api: 'generateContent',
      };
  }
}

/**
 * Builds every configured provider, in order. Expects a parsed inference section; throws an invalid_input AppError
 * naming the field when an API key is missing. Returns an empty list when none is configured.
 */
export function resolveProviders(config: InferenceConfig, options: ResolveOptions = {}): ResolvedProvider[] {
  const env = options.env ?? process.env;
  return config.providers.map((provider, index) => {
    const secret = resolveApiKey(provider, index, env);
    const { languageModel, api } = buildModel(provider, secret, options.fetch);
    return {
      id: providerId(provider),
      kind: provider.kind,
      model: provider.model,
      api,
      languageModel,
      stream: provider.stream,
      timeoutMs: provider.timeoutMs ?? config.timeoutMs,
      maxOutputTokens: provider.maxOutputTokens,
      secret,
    };
  });
}

// Config section of model inference: an ordered provider list; a retryable failure (429, 5xx, timeout, connection error)
// moves to the next provider. Owned by inference/ (src/inference/providers.ts turns each entry into an AI SDK model).
import { z } from 'zod';

/** The provider kinds inference knows, each reached through its AI SDK provider package. */
export const PROVIDER_KINDS = ['anthropic', 'openai', 'openai-compatible', 'google'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The environment variable read for the API key when a provider names neither `apiKey` nor `apiKeyEnv`. */
export const DEFAULT_API_KEY_ENV: Record<ProviderKind, string | undefined> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
  // A local server (Ollama, LM Studio, vLLM) usually needs no key; name one with apiKeyEnv when it does.
  'openai-compatible': undefined,
};

/** One model provider, reached through the AI SDK. */
export const providerSchema = z
  .strictObject({
    /** A name for logs, errors and results (default: the kind); unique within the list. */
    id: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits, _ . : and - only')
      .optional(),
    kind: z.enum(PROVIDER_KINDS),
    model: z.string().min(1),
    /** The API key itself; prefer `apiKeyEnv` so secrets stay out of the config file. */
    apiKey: z.string().min(1).optional(),
    /** Name of the environment variable holding the API key (default: the kind's usual variable, see DEFAULT_API_KEY_ENV). */
    apiKeyEnv: z.string().min(1).optional(),
    /**
     * The SDK's base URL, version prefix included: required for openai-compatible (e.g. http://127.0.0.1:11434/v1 for
     * Ollama); optional elsewhere (a proxy: https://…/v1 for anthropic and openai, https://…/v1beta for google).
     */
    baseUrl: z.url().optional(),
    /** openai only: the Responses API (the SDK's default) or Chat Completions (`/chat/completions`). */
    api: z.enum(['responses', 'chat']).optional(),
    /** Stream the answer (SSE) and collect it, instead of one JSON response; useful for long answers behind proxies. */
    stream: z.boolean().default(false),
    /** This provider's time limit for one call; default: `inference.timeoutMs`. */
    timeoutMs: z.number().int().positive().optional(),
    /** Upper bound on generated tokens; default: the SDK's per-model default. */
    maxOutputTokens: z.number().int().positive().optional(),
  })
  .superRefine((provider, ctx) => {
    if (provider.apiKey !== undefined && provider.apiKeyEnv !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['apiKeyEnv'], message: 'set apiKey or apiKeyEnv, not both' });
    }
    if (provider.kind === 'openai-compatible' && provider.baseUrl === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'required for kind openai-compatible (e.g. http://127.0.0.1:11434/v1)',
      });
    }
    if (provider.api !== undefined && provider.kind !== 'openai') {
      ctx.addIssue({
        code: 'custom',
        path: ['api'],
        message: 'only for kind openai (openai-compatible always uses Chat Completions)',
      });
    }
  });

export type ProviderConfig = z.infer<typeof providerSchema>;

/** Providers in order of preference. */
export const inferenceSchema = z
  .strictObject({
    providers: z.array(providerSchema).default([]),
    /** A call that takes longer than this fails (and falls back to the next provider). */
    timeoutMs: z.number().int().positive().default(120_000),
    /**
     * Retries the AI SDK itself makes on one provider (with its exponential backoff and retry-after) before inference
     * moves on. Default 0: the fallback across providers is the retry policy, so a 429 or 529 moves on at once instead of
     * waiting seconds on a struggling provider; raise it when only one provider is configured.
     */
    retriesPerProvider: z.number().int().min(0).max(5).default(0),
  })
  .superRefine((section, ctx) => {
    const seen = new Map<string, number>();
    section.providers.forEach((provider, index) => {
      const id = provider.id ?? provider.kind;
      const first = seen.get(id);
      if (first === undefined) seen.set(id, index);
      else
        ctx.addIssue({
          code: 'custom',
          path: ['providers', index, 'id'],
          message: `provider id '${id}' is already used by providers.${first}; give each provider its own id`,
        });
    });
  });

export type InferenceConfig = z.infer<typeof inferenceSchema>;

/** The id a provider is known by: its `id`, else its kind. */
export function providerId(provider: ProviderConfig): string {
  return provider.id ?? provider.kind;
}

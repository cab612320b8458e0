// Config section of model inference: an ordered provider list; a retryable failure moves to the next provider.
import { z } from 'zod';

/** One model provider, reached through the AI SDK. */
export const providerSchema = z.strictObject({
  /** A name for logs and errors (default: the kind). */
  id: z.string().min(1).optional(),
  kind: z.enum(['anthropic', 'openai', 'openai-compatible', 'google']),
  model: z.string().min(1),
  /** The API key itself; prefer `apiKeyEnv` so secrets stay out of the config file. */
  apiKey: z.string().min(1).optional(),
  /** Name of the environment variable holding the API key. */
  apiKeyEnv: z.string().min(1).optional(),
  /** Base URL (required for openai-compatible, e.g. http://127.0.0.1:11434/v1 for Ollama). */
  baseUrl: z.url().optional(),
});

/** Providers in order of preference. */
export const inferenceSchema = z.strictObject({
  providers: z.array(providerSchema).default([]),
  /** A call that takes longer than this fails (and falls back to the next provider). */
  timeoutMs: z.number().int().positive().default(120_000),
});

// Model inference with real fallback: each call walks the configured providers in order; a retryable failure (429, 5xx
// incl. 529, a time-out, a connection error, an answer cut off mid-stream) is logged and moves to the next provider, any
// other failure (400, 401, 403, 404, …) ends the call. Unlike the router this replaces, which only fell back when
// creating a client threw, the fallback here covers the call itself.
//
// Retries: the AI SDK's own retry loop is set to `inference.retriesPerProvider` (default 0). Our fallback is the retry
// policy: a struggling provider is left at once for the next one instead of being retried with seconds of backoff.
import type { FinishReason, LanguageModelUsage } from 'ai';
import { generateText, streamText } from 'ai';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import type { InferenceConfig } from '../core/config-inference.ts';
import type { Logger } from '../core/logger.ts';
import type { AttemptFailure } from './failure.ts';
import { classifyFailure } from './failure.ts';
import type { SdkToolCall } from './messages.ts';
import { fromToolCalls, toModelMessages, toToolSet } from './messages.ts';
import type { ResolvedProvider } from './providers.ts';
import { resolveProviders } from './providers.ts';
import type { Inference, InferenceRequest, InferenceResult } from './types.ts';
import { InferenceError, NoProviderError } from './types.ts';

export interface InferenceOptions {
  /** Time source for the per-call time limit; default the system clock. */
  clock?: Clock;
  /** Where `apiKeyEnv` is looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** A fetch for every provider (tests); default the global fetch. */
  fetch?: typeof globalThis.fetch;
}

/** What one provider answered, before it becomes an InferenceResult. */
interface Answer {
  text: string;
  toolCalls: readonly SdkToolCall[];
  finishReason: FinishReason;
  usage: LanguageModelUsage;
  modelId: string | undefined;
}

type Outcome = { ok: true; result: InferenceResult } | { ok: false; failure: AttemptFailure };

/** The caller's signal fired: no fallback, the call ends. */
const ABORTED: AttemptFailure = Object.freeze({ retryable: false, kind: 'aborted', reason: 'aborted by the caller' });

/** Finish reasons that mean the answer is not whole: the call counts as failed and may move on. */
const BROKEN_FINISH: ReadonlySet<string> = new Set(['error', 'interrupted']);

/** Distinct SDK warnings remembered (and logged) per Inference; later ones are dropped. */
const MAX_WARNINGS_REMEMBERED = 100;

class FallbackInference implements Inference {
  readonly available: boolean;
  readonly #providers: ResolvedProvider[];
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #maxRetries: number;
  /** Warnings already logged, so a per-call warning is logged once. */
  readonly #warned = new Set<string>();

  constructor(providers: ResolvedProvider[], logger: Logger, clock: Clock, maxRetries: number) {
    this.#providers = providers;
    this.#logger = logger;
    this.#clock = clock;
    this.#maxRetries = maxRetries;
    this.available = providers.length > 0;
  }

  async complete(request: InferenceRequest): Promise<InferenceResult> {
    if (this.#providers.length === 0) throw new NoProviderError();
    const attempts: string[] = [];
    const log = this.#logger.child({ ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}) });
    for (const [index, provider] of this.#providers.entries()) {
      const outcome: Outcome = request.signal?.aborted
        ? { ok: false, failure: ABORTED }
        : await this.#attempt(provider, request);
      if (outcome.ok) {
        const { result } = outcome;
        const fields = {
          provider: result.provider,
          model: result.model,
          finishReason: result.finishReason,
          usage: result.usage,
          toolCalls: result.toolCalls.length,
        };
        if (attempts.length > 0)
          log.info({ ...fields, failedProviders: attempts.length }, 'inference answered after fallback');
        else log.debug(fields, 'inference answered');
        return result;
      }
      const { failure } = outcome;
      attempts.push(`${provider.id}: ${failure.reason}`);
      const fields = {
        provider: provider.id,
        model: provider.model,
        kind: failure.kind,
        ...(failure.status !== undefined ? { status: failure.status } : {}),
        reason: failure.reason,
      };
      if (failure.kind === 'aborted') {
        log.info(fields, 'inference aborted');
        throw new InferenceError('Inference aborted.', attempts);
      }
      if (!failure.retryable) {
        log.warn(fields, 'inference failed with an error another provider would not fix; not falling back');
        throw new InferenceError(`Inference failed: ${attempts.join('; ')}`, attempts);
      }
      const next = this.#providers[index + 1];
      if (next)
        log.warn(
          { ...fields, from: provider.id, to: next.id, toModel: next.model },
          `inference fallback: ${provider.id} → ${next.id}`,
        );
    }
    log.error({ attempts }, 'inference failed on every provider');
    throw new InferenceError(`Inference failed: ${attempts.join('; ')}`, attempts);
  }

  /** One call to one provider, bounded by its time limit and the caller's signal. */
  async #attempt(provider: ResolvedProvider, request: InferenceRequest): Promise<Outcome> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = this.#clock.after(provider.timeoutMs, () => {
      timedOut = true;
      controller.abort(new DOMException(`no answer within ${provider.timeoutMs} ms`, 'TimeoutError'));
    });
    const onAbort = (): void => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const answer = provider.stream
        ? await this.#stream(provider, request, controller.signal)
        : await this.#generate(provider, request, controller.signal);
      if (BROKEN_FINISH.has(answer.finishReason)) {
        return {
          ok: false,
          failure: {
            retryable: true,
            kind: 'stream',
            reason: `the answer ended with finish reason '${answer.finishReason}'`,
          },
        };
      }
      const usage =
        answer.usage.inputTokens !== undefined || answer.usage.outputTokens !== undefined
          ? { usage: { inputTokens: answer.usage.inputTokens ?? 0, outputTokens: answer.usage.outputTokens ?? 0 } }
          : {};
      return {
        ok: true,
        result: {
          text: answer.text,
          toolCalls: fromToolCalls(answer.toolCalls),
          finishReason: answer.finishReason,
          provider: provider.id,
          model: answer.modelId || provider.model,
          ...usage,
        },
      };
    } catch (error) {
      if (timedOut)
        return {
          ok: false,
          failure: { retryable: true, kind: 'timeout', reason: `timed out after ${provider.timeoutMs} ms` },
        };
      if (request.signal?.aborted) return { ok: false, failure: ABORTED };
      return { ok: false, failure: classifyFailure(error, [provider.secret]) };
    } finally {
      timer.cancel();
      request.signal?.removeEventListener('abort', onAbort);
    }
  }

  #callOptions(provider: ResolvedProvider, request: InferenceRequest, signal: AbortSignal) {
    const tools = toToolSet(request.tools);
    return {
      model: provider.languageModel,
      ...(request.system !== '' ? { instructions: request.system } : {}),
      messages: toModelMessages(request.messages),
      ...(tools ? { tools } : {}),
      ...(provider.maxOutputTokens !== undefined ? { maxOutputTokens: provider.maxOutputTokens } : {}),
      maxRetries: this.#maxRetries,
      abortSignal: signal,
    };
  }

  async #generate(provider: ResolvedProvider, request: InferenceRequest, signal: AbortSignal): Promise<Answer> {
    const result = await generateText(this.#callOptions(provider, request, signal));
    this.#warn(provider, result.warnings);
    return {
      text: result.text,
      toolCalls: result.toolCalls,
      finishReason: result.finishReason,
      usage: result.usage,
      modelId: result.response.modelId,
    };
  }

  /** Streams the answer and collects it; an error part (or an abort) fails the attempt as a whole. */
  async #stream(provider: ResolvedProvider, request: InferenceRequest, signal: AbortSignal): Promise<Answer> {
    let failure: { error: unknown } | undefined;
    const result = streamText({
      ...this.#callOptions(provider, request, signal),
      onError: ({ error }) => {
        failure ??= { error };
      },
    });
    let aborted = false;
    for await (const part of result.stream) {
      if (part.type === 'error') failure ??= { error: part.error };
      else if (part.type === 'abort') aborted = true;
    }
    if (failure) throw failure.error;
    if (aborted) throw signal.reason ?? new DOMException('The stream was aborted.', 'AbortError');
    const [text, toolCalls, finishReason, usage, response, warnings] = await Promise.all([
      result.text,
      result.toolCalls,
      result.finishReason,
      result.usage,
      result.response,
      result.warnings,
    ]);
    this.#warn(provider, warnings);
    return { text, toolCalls, finishReason, usage, modelId: response.modelId };
  }

  /** Logs the SDK's call warnings (unknown model, unsupported setting, …), each distinct one once per provider. */
  #warn(provider: ResolvedProvider, warnings: readonly unknown[] | undefined): void {
    const fresh = (warnings ?? []).filter((warning) => {
      const key = `${provider.id}\u0000${JSON.stringify(warning)}`;
      if (this.#warned.has(key) || this.#warned.size >= MAX_WARNINGS_REMEMBERED) return false;
      this.#warned.add(key);
      return true;
    });
    if (fresh.length > 0)
      this.#logger.warn(
        { provider: provider.id, model: provider.model, warnings: fresh },
        'inference provider warnings',
      );
  }
}

/**
 * Builds model inference over the configured providers, in order. Expects the parsed `inference` config section and the
 * daemon's logger; throws an invalid_input AppError naming the field when a provider's API key variable is missing.
 * With no provider configured the result is `available: false` and `complete()` throws NoProviderError.
 */
export function createInference(config: InferenceConfig, logger: Logger, options: InferenceOptions = {}): Inference {
  const providers = resolveProviders(config, {
    ...(options.env ? { env: options.env } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const log = logger.child({ component: 'inference' });
  if (providers.length > 0)
    log.info(
      { providers: providers.map((p) => ({ id: p.id, kind: p.kind, api: p.api, model: p.model, stream: p.stream })) },
      'inference providers',
    );
  return new FallbackInference(providers, log, options.clock ?? systemClock(), config.retriesPerProvider);
}

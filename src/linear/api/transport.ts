// One Linear call = budget slot + credential + @linear/sdk LinearClient, with the failure rules of the contract:
// user errors final, auth refreshed once, rate limits waited out within the budget, network/5xx backed off (bounded).
import { LinearClient } from '@linear/sdk';
import type { Clock } from '../../core/clock.ts';
import type { LinearConfig } from '../../core/config-linear.ts';
import type { Logger } from '../../core/logger.ts';
import { classifyLinearFailure } from './classify.ts';
import type { CredentialSource, LinearCredential } from './credentials.ts';
import type { RequestBudget } from './request-budget.ts';
import { sleep } from './request-budget.ts';
import { LinearApiError } from './types.ts';

export interface LinearTransportOptions {
  apiUrl: string;
  credentials: CredentialSource;
  /** The budget of the workspace these credentials belong to. */
  budget: RequestBudget;
  clock: Clock;
  logger: Logger;
  requests: LinearConfig['requests'];
}

/** Executes Linear operations through the SDK under the retry, auth and budget rules. */
export class LinearTransport {
  #o: LinearTransportOptions;

  constructor(options: LinearTransportOptions) {
    this.#o = options;
  }

  /**
   * Runs `fn` with a LinearClient built for this attempt (current credential, per-request timeout). Returns what `fn`
   * returns; throws LinearApiError. A user error is thrown at once; an auth error triggers one credential refresh and one
   * retry, then is final; rate limits block the workspace budget until Linear's reset; network and 5xx errors are retried
   * with exponential backoff. Rate limits, network and server errors together get at most `requests.maxAttempts` attempts.
   */
  async run<T>(operation: string, fn: (client: LinearClient) => Promise<T>): Promise<T> {
    const { budget, credentials, clock, logger, requests } = this.#o;
    let failures = 0;
    let refreshed = false;
    let credential: LinearCredential | undefined;
    for (;;) {
      credential ??= await credentials.current();
      await budget.acquire();
      try {
        return await fn(this.#client(credential));
      } catch (error) {
        if (error instanceof LinearApiError) throw error;
        const failure = classifyLinearFailure(error);
        if (failure.kind === 'user') throw new LinearApiError('user', `${operation}: ${failure.message}`);
        if (failure.kind === 'auth') {
          if (!refreshed) {
            refreshed = true;
            const next = await credentials.afterAuthFailure(credential);
            if (next) {
              logger.info(
                { operation, source: credential.label },
                'linear: token refused, retrying once with a refreshed token',
              );
              credential = next;
              continue;
            }
          }
          throw new LinearApiError(
            'auth',
            `${operation}: Linear refused the token from ${credential.label}: ${failure.message}`,
          );
        }
        failures += 1;
        if (failures >= requests.maxAttempts) {
          throw new LinearApiError(
            failure.kind,
            `${operation}: gave up after ${failures} attempts: ${failure.message}`,
          );
        }
        const backoff = Math.min(requests.backoffMaxMs, requests.backoffInitialMs * 2 ** (failures - 1));
        if (failure.kind === 'rate_limit') {
          const until =
            failure.resetAt ??
            (failure.retryAfterMs !== undefined ? clock.now() + failure.retryAfterMs : clock.now() + backoff);
          budget.blockUntil(until);
          logger.warn(
            { operation, attempt: failures, waitMs: Math.max(0, until - clock.now()) },
            'linear: rate limited, holding requests until the reset',
          );
          // The next acquire() waits for the reset, or fails as rate_limit if it is further away than maxRateLimitWaitMs.
          continue;
        }
        logger.warn(
          { operation, kind: failure.kind, attempt: failures, delayMs: backoff, err: failure.message },
          'linear: request failed, backing off',
        );
        await sleep(clock, backoff);
        // A fresh credential next time round (an OAuth token may have been refreshed meanwhile).
        credential = undefined;
      }
    }
  }

  /**
   * Sends a raw GraphQL document through the SDK's client (for what the model API cannot express: ephemeral activities,
   * the `GraphQL-Features: sub_issues` header, one-request reads). Returns the `data` object.
   */
  request(
    operation: string,
    query: string,
    variables: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<unknown> {
    return this.run(operation, async (client) => (await client.client.rawRequest(query, variables, headers)).data);
  }

  #client(credential: LinearCredential): LinearClient {
    const signal = AbortSignal.timeout(this.#o.requests.timeoutMs);
    return credential.kind === 'apiKey'
      ? new LinearClient({ apiKey: credential.token, apiUrl: this.#o.apiUrl, signal })
      : new LinearClient({ accessToken: credential.token, apiUrl: this.#o.apiUrl, signal });
  }
}

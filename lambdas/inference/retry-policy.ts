// Retries in one place: only retryable failures (408, 429, 5xx, 529, timeouts — see ProviderError),
// Retry-After honoured, capped exponential backoff with full jitter.
import type { ProviderError } from '../providers/provider-error.js';

export interface RetryPolicy {
  /** Tries of one endpoint before moving to the next candidate. */
  attemptsPerEndpoint: number;
  /** Tries of one model's candidates together (its endpoints and credentials); each fallback model has as many. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the next candidate is tried instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attemptsPerEndpoint: 2,
  maxAttempts: 6,
  baseDelayMs: 200,
  maxDelayMs: 2_000,
  maxRetryAfterMs: 2_000,
};

/** How long to wait before trying the same endpoint again, or undefined to move on. */
export function retryDelayMs(error: ProviderError, triesOfEndpoint: number, policy: RetryPolicy, random: () => number): number | undefined {
  if (!error.retryable || triesOfEndpoint >= policy.attemptsPerEndpoint) return undefined;
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (triesOfEndpoint - 1));
  const jittered = Math.round(backoff * random());
  if (error.retryAfterMs === undefined) return jittered;
  if (error.retryAfterMs > policy.maxRetryAfterMs) return undefined;
  return Math.max(error.retryAfterMs, jittered);
}

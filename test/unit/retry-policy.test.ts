// Retries in one place: which failures are retried, how long to wait, when to move on to the next endpoint.
import { describe, expect, it } from '@jest/globals';
import { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from '../../lambdas/inference/retry-policy.js';
import { ProviderError, isRetryableStatus, parseRetryAfter, type ProviderErrorKind } from '../../lambdas/providers/provider-error.js';

const policy: RetryPolicy = { attemptsPerEndpoint: 10, maxAttempts: 20, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 3_000 };

function failure(status: number, options: { kind?: ProviderErrorKind; retryAfterMs?: number } = {}): ProviderError {
  return new ProviderError({
    provider: 'test', kind: options.kind ?? 'http', status, message: `HTTP ${status}`,
    ...(options.retryAfterMs !== undefined ? { retryAfterMs: options.retryAfterMs } : {}),
  });
}

const always = (value: number) => () => value;

describe('retryDelayMs', () => {
  it('never retries a non-retryable failure', () => {
    for (const status of [400, 401, 403, 404, 422]) {
      expect(retryDelayMs(failure(status), 1, policy, always(0.5))).toBeUndefined();
    }
    expect(retryDelayMs(failure(502, { kind: 'invalid-response' }), 1, policy, always(0.5))).toBeUndefined();
    expect(retryDelayMs(failure(499, { kind: 'aborted' }), 1, policy, always(0.5))).toBeUndefined();
  });

  it('retries timeouts and network failures', () => {
    expect(retryDelayMs(failure(408, { kind: 'timeout' }), 1, policy, always(1))).toBe(100);
    expect(retryDelayMs(failure(502, { kind: 'network' }), 1, policy, always(1))).toBe(100);
  });

  it('backs off exponentially from the base delay, capped at the maximum', () => {
    const error = failure(503);
    // random() → 1 gives the full (un-jittered) backoff: 100, 200, 400, 800, then the 1000 cap.
    expect([1, 2, 3, 4, 5, 6, 9].map((tries) => retryDelayMs(error, tries, policy, always(1)))).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('applies full jitter: a random fraction of the backoff', () => {
    const error = failure(500);
    expect(retryDelayMs(error, 3, policy, always(0))).toBe(0);
    expect(retryDelayMs(error, 3, policy, always(0.25))).toBe(100);
    expect(retryDelayMs(error, 3, policy, always(0.5))).toBe(200);
    expect(retryDelayMs(error, 8, policy, always(0.999))).toBe(999);
    // Over many draws every delay is within [0, backoff] and they are spread out.
    let state = 1;
    const random = () => ((state = (state * 48271) % 2147483647) / 2147483647);
    const delays = Array.from({ length: 500 }, () => retryDelayMs(error, 4, policy, random)!);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(800);
    expect(new Set(delays).size).toBeGreaterThan(100);
    expect(Math.min(...delays)).toBeLessThan(100);
    expect(Math.max(...delays)).toBeGreaterThan(700);
  });

  it('waits at least the Retry-After the provider asked for', () => {
    const error = failure(429, { retryAfterMs: 1_500 });
    expect(retryDelayMs(error, 1, policy, always(0))).toBe(1_500);
    expect(retryDelayMs(error, 1, policy, always(0.99))).toBe(1_500);
    // A jittered backoff longer than Retry-After wins.
    expect(retryDelayMs(failure(503, { retryAfterMs: 50 }), 5, policy, always(1))).toBe(1_000);
    // Exactly the longest Retry-After that is still waited for.
    expect(retryDelayMs(failure(429, { retryAfterMs: 3_000 }), 1, policy, always(0))).toBe(3_000);
    expect(retryDelayMs(failure(429, { retryAfterMs: 0 }), 1, policy, always(1))).toBe(100);
  });

  it('moves on (undefined) when Retry-After is beyond maxRetryAfterMs', () => {
    expect(retryDelayMs(failure(429, { retryAfterMs: 3_001 }), 1, policy, always(0))).toBeUndefined();
    expect(retryDelayMs(failure(503, { retryAfterMs: 60_000 }), 1, policy, always(1))).toBeUndefined();
  });

  it('stops after attemptsPerEndpoint tries of the same endpoint', () => {
    const twice: RetryPolicy = { ...policy, attemptsPerEndpoint: 2 };
    const error = failure(500);
    expect(retryDelayMs(error, 1, twice, always(1))).toBe(100);
    expect(retryDelayMs(error, 2, twice, always(1))).toBeUndefined();
    expect(retryDelayMs(error, 3, twice, always(1))).toBeUndefined();
    const once: RetryPolicy = { ...policy, attemptsPerEndpoint: 1 };
    expect(retryDelayMs(error, 1, once, always(1))).toBeUndefined();
    expect(retryDelayMs(failure(429, { retryAfterMs: 10 }), 1, once, always(1))).toBeUndefined();
  });

  it('has sane defaults: two tries per endpoint, Retry-After up to 2 s', () => {
    expect(DEFAULT_RETRY_POLICY).toMatchObject({ attemptsPerEndpoint: 2, maxRetryAfterMs: 2_000 });
    expect(retryDelayMs(failure(429, { retryAfterMs: 1_000 }), 1, DEFAULT_RETRY_POLICY, always(0))).toBe(1_000);
    expect(retryDelayMs(failure(429, { retryAfterMs: 2_001 }), 1, DEFAULT_RETRY_POLICY, always(0))).toBeUndefined();
    expect(retryDelayMs(failure(500), 1, DEFAULT_RETRY_POLICY, always(1))).toBe(DEFAULT_RETRY_POLICY.baseDelayMs);
    expect(retryDelayMs(failure(500), 2, DEFAULT_RETRY_POLICY, always(1))).toBeUndefined();
  });
});

describe('isRetryableStatus', () => {
  it.each([408, 429, 500, 502, 503, 504, 524, 529])('%i is retryable', (status) => {
    expect(isRetryableStatus(status)).toBe(true);
    expect(failure(status).retryable).toBe(true);
  });

  it.each([400, 401, 402, 403, 404, 409, 413, 422])('%i is not retryable', (status) => {
    expect(isRetryableStatus(status)).toBe(false);
    expect(failure(status).retryable).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 0, 15, 12, 0, 0);

  it('reads delta seconds', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '3' }), now)).toBe(3_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0' }), now)).toBe(0);
    expect(parseRetryAfter(new Headers({ 'retry-after': ' 1.5 ' }), now)).toBe(1_500);
    expect(parseRetryAfter(new Headers({ 'retry-after': '120' }), now)).toBe(120_000);
  });

  it('reads an HTTP date relative to now, never negative', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': new Date(now + 7_000).toUTCString() }), now)).toBe(7_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 15 Jan 2026 12:01:00 GMT' }), now)).toBe(60_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 15 Jan 2026 11:59:00 GMT' }), now)).toBe(0);
  });

  it('prefers retry-after-ms', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '12.2' }), now)).toBe(13);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '5' }), now)).toBe(250);
    // An unusable retry-after-ms falls back to retry-after.
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': 'soon', 'retry-after': '5' }), now)).toBe(5_000);
  });

  it('is undefined when absent or unreadable', () => {
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': 'later' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': '-1' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'x-other': '5' }), now)).toBeUndefined();
  });
});

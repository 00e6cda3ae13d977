// The last provider failure as a domain error, read through the HTTP error map: the status, message,
// metadata and Retry-After the caller has always been answered with.
import { describe, expect, it } from '@jest/globals';
import { httpErrorOf, toErrorReply } from '../../lambdas/platform/http/errors.js';
import { abortedError, upstreamError } from '../../lambdas/inference/provider-failure.js';
import { ShuttingDown } from '../../lambdas/platform/shutdown.js';
import { ProviderError, type ProviderErrorKind } from '../../lambdas/providers/provider-error.js';
import type { RouteTrace } from '../../lambdas/inference/trace.js';

const trace = { generationId: 'gen-1', attempts: [{}, {}] } as unknown as RouteTrace;

function answered(kind: ProviderErrorKind, status: number, extra: { retryAfterMs?: number; providerCode?: string } = {}) {
  return httpErrorOf(upstreamError(new ProviderError({ provider: 'alpha', kind, status, message: 'boom', ...extra }), trace));
}

describe('upstreamError', () => {
  it('passes on the provider\'s 408, 429, 529, 400, 413 and 422, and answers anything else with 502', () => {
    for (const status of [408, 429, 529, 400, 413, 422]) expect(answered('http', status).status).toBe(status);
    for (const status of [401, 404, 500, 503]) expect(answered('http', status).status).toBe(502);
    expect(answered('invalid-response', 502).status).toBe(502);
  });

  it('answers a timeout with 408, a refused or dropped connection with 502 (unless it carries a passed-on status), an aborted attempt with 499', () => {
    expect(answered('timeout', 408).status).toBe(408);
    expect(answered('network', 502).status).toBe(502);
    expect(answered('network', 429).status).toBe(429);
    expect(answered('dropped', 502).status).toBe(502);
    expect(answered('aborted', 499).status).toBe(499);
  });

  it('says what happened, with the provider\'s details and the attempts in metadata', () => {
    expect(answered('http', 503, { providerCode: 'overloaded' })).toMatchObject({
      message: 'Provider alpha returned 503: boom',
      metadata: { provider_name: 'alpha', raw: 'boom', provider_code: 'overloaded', attempts: 2, generation_id: 'gen-1' },
    });
    expect(answered('timeout', 408).message).toBe('Provider alpha timed out: boom');
    expect(answered('network', 502).message).toBe('Provider alpha connection failed: boom');
    expect(answered('dropped', 502).message).toBe('Provider alpha connection dropped before the reply completed');
    expect(answered('http', 400).metadata).not.toHaveProperty('provider_code');
  });

  it('passes Retry-After on in whole seconds, rounded up, and sends none without it', () => {
    expect(answered('http', 429, { retryAfterMs: 1_500 }).headers).toEqual({ 'retry-after': '2' });
    expect(toErrorReply(upstreamError(new ProviderError({ provider: 'alpha', kind: 'http', status: 429, message: 'slow down', retryAfterMs: 3_000 }), trace), 'req-1').headers).toEqual({ 'retry-after': '3' });
    expect(answered('http', 429).headers).toBeUndefined();
  });
});

describe('abortedError', () => {
  it('is a 499 when the client went away and the shutdown\'s 503 when the gateway is stopping', () => {
    const client = new AbortController();
    client.abort(new Error('socket closed'));
    expect(httpErrorOf(abortedError(client.signal))).toMatchObject({ status: 499, message: 'Client closed the request' });
    const shutdown = new AbortController();
    shutdown.abort(new ShuttingDown());
    expect(httpErrorOf(abortedError(shutdown.signal))).toMatchObject({ status: 503, message: 'The gateway is shutting down; retry the request' });
  });
});

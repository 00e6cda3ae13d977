// How a failed provider call and a request stopped early read as domain errors (the HTTP error map turns
// them into statuses): the last provider failure as an UpstreamError (a ClientClosedError for an attempt
// the adapter reports as aborted), the client gone or the gateway shutting down.
import { ClientClosedError, UpstreamError, type DomainError } from '../platform/errors.js';
import type { CatalogEndpoint } from '../catalog/index.js';
import { ProviderError } from '../providers/provider-error.js';
import { isShuttingDown, shuttingDownError } from '../platform/shutdown.js';
import type { RouteTrace } from './trace.js';

/** Provider statuses the caller is answered with as they are; anything else reads as a bad gateway. */
const PASSED_ON = new Set([408, 429, 529, 400, 413, 422]);

/**
 * The last provider failure as the caller is told it: a timeout, the provider's own 408, 429, 529, 400, 413
 * and 422, a dropped or refused connection, anything else as the provider's status (a bad gateway);
 * Retry-After is passed on.
 */
export function upstreamError(error: ProviderError, trace: RouteTrace): DomainError {
  const retryAfterSeconds = error.retryAfterMs === undefined ? undefined : Math.ceil(error.retryAfterMs / 1000);
  const cause = error.kind === 'timeout' ? 'timed out' : error.kind === 'network' ? 'connection failed' : `returned ${error.status}`;
  const message = error.kind === 'dropped'
    ? `Provider ${error.provider} connection dropped before the reply completed`
    : `Provider ${error.provider} ${cause}: ${error.message}`;
  const options = {
    metadata: {
      provider_name: error.provider,
      raw: error.message,
      ...(error.providerCode ? { provider_code: error.providerCode } : {}),
      attempts: trace.attempts.length,
      generation_id: trace.generationId,
    },
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  };
  if (error.kind === 'aborted') return new ClientClosedError(message, options);
  if (error.kind === 'timeout') return new UpstreamError(message, { ...options, reason: 'timeout' });
  // A passed-on status wins over the kind (a network failure the adapter reported as a 429 stays a 429).
  const reason = PASSED_ON.has(error.status) ? 'status' : error.kind === 'network' ? 'network' : error.kind === 'dropped' ? 'dropped' : 'status';
  return new UpstreamError(message, { ...options, reason, upstreamStatus: error.status });
}

/** Why a request stopped early: the gateway shutting down, or the client gone (whose reply is never written). */
export function abortedError(signal: AbortSignal): DomainError {
  if (isShuttingDown(signal.reason)) return shuttingDownError();
  return new ClientClosedError('Client closed the request', { cause: signal.reason });
}

/** Whatever an attempt threw, as a ProviderError; the attempt's own timer firing is a timeout. */
export function asProviderError(err: unknown, endpoint: CatalogEndpoint, signal: AbortSignal): ProviderError {
  if (signal.aborted && signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError') {
    return new ProviderError({ provider: endpoint.provider, kind: 'timeout', status: 408, message: signal.reason.message, cause: err });
  }
  if (err instanceof ProviderError) return err;
  return new ProviderError({ provider: endpoint.provider, kind: 'network', status: 502, message: (err as Error)?.message ?? String(err), cause: err });
}

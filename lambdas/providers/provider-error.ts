// What went wrong upstream, normalized: the status to report, whether a retry may help, and how long to wait.
// `dropped`: the connection closed after the reply had started and before it was complete. Not retried: the
// provider has done (and billed) that generation, and a retry would pay for it twice.
export type ProviderErrorKind = 'http' | 'timeout' | 'network' | 'dropped' | 'invalid-response' | 'aborted';

const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504, 520, 522, 524, 529]);

/** The one place that decides retryability: 408, 429, 5xx, 529 and timeouts. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status) || (status >= 500 && status <= 599);
}

export class ProviderError extends Error {
  readonly provider: string;
  readonly kind: ProviderErrorKind;
  /** Upstream HTTP status (or the status we report for timeouts and network failures). */
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /** The provider's own error code or type, for metadata. */
  readonly providerCode: string | undefined;

  constructor(init: {
    provider: string;
    kind: ProviderErrorKind;
    status: number;
    message: string;
    retryAfterMs?: number;
    providerCode?: string;
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.name = 'ProviderError';
    this.provider = init.provider;
    this.kind = init.kind;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.providerCode = init.providerCode;
    this.retryable = init.kind === 'timeout' || init.kind === 'network' || (init.kind === 'http' && isRetryableStatus(init.status));
  }
}

/** Retry-After as seconds or an HTTP date; also the millisecond variants some providers send. */
export function parseRetryAfter(headers: { get(name: string): string | null }, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  // Only an HTTP date is left; anything else (negative or malformed numbers) is no instruction at all.
  if (!/[a-z]/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

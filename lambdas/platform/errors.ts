// Domain errors: what went wrong, in the domain's words and without HTTP. Features, billing and the
// inference pipeline throw these; the HTTP platform's error map (platform/http/errors.ts) is the one
// place that turns each kind into a status and the error envelope.

export interface DomainErrorOptions {
  /** Machine-readable details, shown to the caller in `error.metadata`. */
  metadata?: Record<string, unknown>;
  /** When trying again may succeed: the caller is told how long to wait (Retry-After). */
  retryAfterSeconds?: number;
  /** Fields beside `error` in the reply (e.g. `service_metadata` of a failed generation). */
  reply?: Record<string, unknown>;
  cause?: unknown;
}

export abstract class DomainError extends Error {
  readonly metadata: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly reply: Record<string, unknown> | undefined;

  constructor(message: string, options: DomainErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.metadata = options.metadata;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.reply = options.reply;
  }
}

/** The input breaks a rule (a field's form, a value out of range, a reference to nothing). */
export class InvalidInputError extends DomainError {}
/** No valid credentials: missing, malformed, unknown, disabled or expired key. */
export class UnauthenticatedError extends DomainError {}
/** The caller is known but may not do this. */
export class ForbiddenError extends DomainError {}
/** Not enough money: the balance, a key's limit or a workspace budget cannot cover the request. */
export class InsufficientFundsError extends DomainError {}
/** The thing named does not exist (or is not visible to this caller). */
export class NotFoundError extends DomainError {}
/** The request conflicts with the current state (a duplicate, a deleting resource). */
export class ConflictError extends DomainError {}
/** The input is well formed but what it asks for cannot be done (a private endpoint that fails its validation). */
export class UnprocessableError extends DomainError {}
/** The input is larger than the operation accepts (a batch's input over its byte limit). */
export class TooLargeError extends DomainError {}
/** A backing service or the gateway itself cannot serve now; trying again later may succeed. */
export class UnavailableError extends DomainError {}
/** The caller went away before the work finished. */
export class ClientClosedError extends DomainError {}

/**
 * The provider(s) behind a generation failed. `upstreamStatus` is what the last provider answered (none for
 * a timeout, a dropped or refused connection); the error map decides what the caller sees.
 */
export class UpstreamError extends DomainError {
  readonly reason: 'timeout' | 'status' | 'network' | 'dropped' | 'unavailable';
  readonly upstreamStatus: number | undefined;

  constructor(message: string, options: DomainErrorOptions & { reason: UpstreamError['reason']; upstreamStatus?: number }) {
    super(message, options);
    this.reason = options.reason;
    this.upstreamStatus = options.upstreamStatus;
  }
}

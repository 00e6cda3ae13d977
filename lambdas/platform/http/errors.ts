// The HTTP side of errors: the error map from domain errors to statuses, the few errors only HTTP has
// (invalid input at the edge, no route, wrong method, body too large, the store unreachable), and the one
// envelope every failure is written as.
import { anthropicErrorType } from './anthropic-error-type.js';
import {
  ClientClosedError, ConflictError as DomainConflict, DomainError, ForbiddenError as DomainForbidden, InsufficientFundsError, InvalidInputError,
  NotFoundError as DomainNotFound, TooLargeError, UnauthenticatedError, UnavailableError, UnprocessableError, UpstreamError,
} from '../errors.js';
import { echo } from '../echo.js';
import { consoleLogger, type Logger } from '../logger.js';

export { echo, MAX_ECHO_CHARS } from '../echo.js';

export class HttpError extends Error {
  readonly status: number;
  readonly metadata: Record<string, unknown> | undefined;
  headers: Record<string, string> | undefined;
  /** Top-level envelope fields beside `error`, e.g. service_metadata. */
  envelope: Record<string, unknown> | undefined;

  constructor(status: number, message: string, options: { metadata?: Record<string, unknown>; headers?: Record<string, string>; envelope?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.metadata = options.metadata;
    this.headers = options.headers;
    this.envelope = options.envelope;
  }
}

type Options = ConstructorParameters<typeof HttpError>[2];

export class BadRequestError extends HttpError {
  constructor(message: string, options?: Options) { super(400, message, options); }
}
export class NotFoundError extends HttpError {
  constructor(message = 'Not found', options?: Options) { super(404, message, options); }
}
export class MethodNotAllowedError extends HttpError {
  constructor(method: string, allowed: string[]) {
    super(405, `Method ${echo(method)} is not allowed on this route; allowed: ${allowed.join(', ')}`, {
      headers: { allow: allowed.join(', ') },
    });
  }
}
export class PayloadTooLargeError extends HttpError {
  constructor(limitBytes: number) {
    super(413, `Request body is larger than this route's limit of ${limitBytes} bytes`, { metadata: { limit_bytes: limitBytes } });
  }
}
export class ServiceUnavailableError extends HttpError {
  constructor(message: string, options?: Options) { super(503, message, options); }
}

/** Status of each domain error kind; a subclass takes its nearest listed ancestor's. */
const STATUS_OF = new Map<abstract new (...args: never[]) => DomainError, number>([
  [InvalidInputError, 400],
  [UnauthenticatedError, 401],
  [InsufficientFundsError, 402],
  [DomainForbidden, 403],
  [DomainNotFound, 404],
  [DomainConflict, 409],
  [TooLargeError, 413],
  [UnprocessableError, 422],
  [ClientClosedError, 499],
  [UnavailableError, 503],
]);

/**
 * A provider's failure as the caller sees it: 408 for a timeout, the provider's own 408, 429, 529, 400, 413
 * and 422, and 502 for anything else.
 */
function upstreamStatus(err: UpstreamError): number {
  if (err.reason === 'timeout') return 408;
  const status = err.upstreamStatus;
  if (err.reason === 'status' && status !== undefined && [408, 429, 529, 400, 413, 422].includes(status)) return status;
  return 502;
}

function statusOf(err: DomainError): number {
  if (err instanceof UpstreamError) return upstreamStatus(err);
  for (let proto = Object.getPrototypeOf(err); proto && proto !== DomainError.prototype; proto = Object.getPrototypeOf(proto)) {
    const status = STATUS_OF.get(proto.constructor);
    if (status !== undefined) return status;
  }
  return 500;
}

/** The error map: a domain error as the HttpError it is answered with (status, Retry-After, envelope fields). */
export function httpErrorOf(err: DomainError): HttpError {
  const headers = err.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(err.retryAfterSeconds) };
  // The mapping captures no stack of its own (a few µs). Only a 5xx is logged, and only its log reads the
  // stack: a 4xx does not take the domain error's, whose formatting goes through the source maps (about
  // 15 µs). Not a lazy accessor either: an accessor defined on an object gives it a map of its own in the
  // old generation, which keeps the getter and everything it reaches alive until a full collection
  // (measured: a loop of 4xx mappings promoted 7 MB per scavenge that way).
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let mapped: HttpError;
  try {
    mapped = new HttpError(statusOf(err), err.message, {
      ...(err.metadata ? { metadata: err.metadata } : {}),
      ...(headers ? { headers } : {}),
      ...(err.reply ? { envelope: err.reply } : {}),
      cause: err.cause,
    });
  } finally {
    Error.stackTraceLimit = limit;
  }
  // The log of a 5xx names the domain error and where it was thrown, and its cause, not this mapping.
  mapped.name = err.name;
  if (mapped.status >= 500 && err.stack !== undefined) mapped.stack = err.stack;
  return mapped;
}

/** On every reply: browsers must not guess a content type (a JSON error that echoes input is never HTML). */
export const NO_SNIFF = { 'x-content-type-options': 'nosniff' } as const;

/** Caps on what any error envelope carries, whatever built it: the body stays small however large the input. */
export const MAX_ERROR_MESSAGE_CHARS = 512;
const MAX_METADATA_STRING_CHARS = 1024;
const MAX_METADATA_ITEMS = 20;


/** Strings and lists in error metadata, bounded (the safety net under every message that echoes input). */
function bounded(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return echo(value, MAX_METADATA_STRING_CHARS);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, MAX_METADATA_ITEMS).map((item) => bounded(item, depth + 1));
  return Object.fromEntries(Object.entries(value).slice(0, MAX_METADATA_ITEMS * 2).map(([name, item]) => [echo(name), bounded(item, depth + 1)]));
}

export interface ErrorEnvelope {
  /** Anthropic's envelope (POST /messages): always "error". */
  type?: 'error';
  /** `type`: Anthropic's error type (POST /messages), beside the code every route gives. */
  error: { type?: string; code: number; message: string; metadata?: Record<string, unknown> };
  service_metadata?: unknown;
  user_id?: string | null;
}

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: ErrorEnvelope;
}

/**
 * Turns anything thrown into the envelope. Only HttpErrors below 500 expose their message;
 * everything else is logged with the request id and answered without internals.
 */
export function toErrorReply(err: unknown, requestId: string, log: Logger = STDERR): ErrorReply {
  if (err instanceof DomainError) return toErrorReply(httpErrorOf(err), requestId, log);
  const unreachable = err instanceof HttpError ? undefined : storeUnreachable(err) ?? storeBusy(err) ?? storeItemTooLarge(err);
  if (unreachable) return toErrorReply(unreachable, requestId, log);
  if (err instanceof HttpError && err.status < 500) {
    const error: ErrorEnvelope['error'] = { code: err.status, message: echo(err.message, MAX_ERROR_MESSAGE_CHARS) };
    if (err.metadata) error.metadata = bounded(err.metadata) as Record<string, unknown>;
    return { status: err.status, headers: { ...err.headers }, body: { error, ...err.envelope } };
  }
  const status = err instanceof HttpError ? err.status : 500;
  const deliberate = err instanceof HttpError && err.status !== 500;
  const message = deliberate ? echo(err.message, MAX_ERROR_MESSAGE_CHARS) : 'Internal server error';
  log.entry('error', {
    request_id: requestId,
    status,
    error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
    // What was behind a deliberate 5xx (e.g. which host could not be reached), for the operator only.
    ...(err instanceof Error && err.cause !== undefined ? { cause: err.cause instanceof Error ? { name: err.cause.name, message: err.cause.message } : String(err.cause) } : {}),
  });
  return {
    status,
    headers: err instanceof HttpError ? { ...err.headers } : {},
    body: { error: { code: status, message, metadata: { ...(deliberate ? bounded(err.metadata ?? {}) as Record<string, unknown> : {}), request_id: requestId } }, ...(deliberate ? err.envelope : {}) },
  };
}

/**
 * The envelope of POST /messages: Anthropic's shape (`{type: "error", error: {type, message}}`, which
 * Anthropic's SDKs read for their error's `type`) with the code and metadata every other route gives, so
 * that a client of either kind finds what it reads.
 */
export function withAnthropicType(body: ErrorEnvelope): ErrorEnvelope {
  return Object.assign({ type: 'error' as const }, body, { error: Object.assign({ type: anthropicErrorType(body.error.code) }, body.error) });
}

const LIFECYCLE_REASONS: Record<number, string> = {
  400: 'invalid_request', 401: 'authentication', 403: 'permission_denied', 404: 'not_found', 409: 'conflict', 413: 'payload_too_large', 415: 'unsupported_media_type',
};

/**
 * The envelope of the intern routes (@openrouter/sdk's InternLifecycleError): metadata, when there is any,
 * always says `reason` and whether trying again may succeed (`retryable`); the SDK rejects it otherwise.
 */
export function withLifecycleMetadata(body: ErrorEnvelope): ErrorEnvelope {
  const { code, metadata } = body.error;
  if (!metadata) return body;
  return {
    ...body,
    error: {
      ...body.error,
      metadata: {
        ...metadata,
        reason: typeof metadata.reason === 'string' ? metadata.reason : LIFECYCLE_REASONS[code] ?? (code >= 500 ? 'server_error' : 'error'),
        retryable: typeof metadata.retryable === 'boolean' ? metadata.retryable : code === 408 || code === 429 || code >= 500,
      },
    },
  };
}

/** Network failures of a client (the SDK's, after its retries): the store or a service cannot be reached. */
const CONNECTION_ERRORS = /\b(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)\b/;

/**
 * A request that failed because a backing service (DynamoDB, KMS) could not be reached is a 503 (try again
 * later), not a 500: locally when DynamoDB Local has died, on AWS during a network fault. The client gets
 * only this message. The SDK may wrap the socket error (then only its message names the code), and the
 * error may come from another realm (Jest), so neither `instanceof` nor the wrapper's shape is relied on.
 */
export function storeUnreachable(err: unknown): ServiceUnavailableError | undefined {
  let cause = err;
  for (let depth = 0; typeof cause === 'object' && cause !== null && depth < 4; depth++) {
    const { code, message, errors } = cause as { code?: unknown; message?: unknown; errors?: unknown };
    const nested = Array.isArray(errors) && errors.some((inner) => CONNECTION_ERRORS.test(String((inner as { code?: unknown })?.code)));
    if ((typeof code === 'string' && CONNECTION_ERRORS.test(code)) || nested || (typeof message === 'string' && /^AWS SDK error wrapper for /.test(message) && CONNECTION_ERRORS.test(message))) {
      return new ServiceUnavailableError('The gateway cannot reach its database or key service; try again shortly', { headers: { 'retry-after': '5' }, cause: err });
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * What an AWS service answers when it cannot take a request at that moment, after the SDK's own retries:
 * an internal error of the service, throttling, and a transaction still running under the same token (a
 * retry of a send whose answer was lost). The request may succeed when sent again.
 */
const BUSY_ERRORS = new Set([
  'InternalServerError', 'InternalFailure', 'ServiceUnavailable', 'ServiceUnavailableException', 'ThrottlingException',
  'ProvisionedThroughputExceededException', 'RequestLimitExceeded', 'TransactionInProgressException', 'KMSInternalException',
]);

/** An error of the AWS SDK (it carries `$metadata`), with its name and message; undefined for anything else. */
function sdkError(err: unknown): { name?: unknown; message?: unknown } | undefined {
  return typeof err === 'object' && err !== null && '$metadata' in err ? err as { name?: unknown; message?: unknown } : undefined;
}

/**
 * A request that failed because DynamoDB (or KMS) was busy or failing for a moment is a 503 with a
 * Retry-After, as one whose store cannot be reached is, not a 500: nothing about the request was wrong.
 * Only errors of the AWS SDK (they carry `$metadata`) are taken: an error of ours with such a name is a bug.
 */
export function storeBusy(err: unknown): ServiceUnavailableError | undefined {
  const sdk = sdkError(err);
  if (!sdk || typeof sdk.name !== 'string' || !BUSY_ERRORS.has(sdk.name)) return undefined;
  return new ServiceUnavailableError('The gateway\'s database or key service is busy; try again shortly', { headers: { 'retry-after': '1' }, cause: err });
}

/**
 * A write DynamoDB refused for its size: an item holds at most 400 KB, and a body within a route's limit can
 * still make a larger one (a guardrail of long model lists, a preset's system prompt). It is the request's
 * data, so 413, not a 500. Only errors of the AWS SDK are taken.
 */
export function storeItemTooLarge(err: unknown): HttpError | undefined {
  const sdk = sdkError(err);
  if (!sdk) return undefined;
  const { name, message } = sdk;
  if (name !== 'ValidationException' || typeof message !== 'string' || !/item size (to update )?has exceeded the maximum allowed size/i.test(message)) return undefined;
  return new HttpError(413, 'Too large to store: what this request would save exceeds the store\'s 400 KB per record; send less (shorter texts or lists)', { cause: err });
}

/** Where a failure before any deps exist (start-up) is logged. */
const STDERR = consoleLogger('stderr');

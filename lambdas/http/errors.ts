// One error hierarchy for every failure the gateway reports, and the one envelope it is written as.
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
export class UnauthorizedError extends HttpError {
  constructor(message: string, options?: Options) { super(401, message, options); }
}
export class PaymentRequiredError extends HttpError {
  constructor(message: string, options?: Options) { super(402, message, options); }
}
export class ForbiddenError extends HttpError {
  constructor(message: string, options?: Options) { super(403, message, options); }
}
export class NotFoundError extends HttpError {
  constructor(message = 'Not found', options?: Options) { super(404, message, options); }
}
export class MethodNotAllowedError extends HttpError {
  constructor(method: string, allowed: string[]) {
    super(405, `Method ${method} is not allowed on this route; allowed: ${allowed.join(', ')}`, {
      headers: { allow: allowed.join(', ') },
    });
  }
}
export class ConflictError extends HttpError {
  constructor(message: string, options?: Options) { super(409, message, options); }
}
export class PayloadTooLargeError extends HttpError {
  constructor(limitBytes: number) {
    super(413, `Request body is larger than this route's limit of ${limitBytes} bytes`, { metadata: { limit_bytes: limitBytes } });
  }
}
export class UnsupportedMediaTypeError extends HttpError {
  constructor(message: string) { super(415, message); }
}
export class ServiceUnavailableError extends HttpError {
  constructor(message: string, options?: Options) { super(503, message, options); }
}

export interface ErrorEnvelope {
  error: { code: number; message: string; metadata?: Record<string, unknown> };
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
export function toErrorReply(err: unknown, requestId: string, log: (line: string) => void = defaultLog): ErrorReply {
  const unreachable = err instanceof HttpError ? undefined : storeUnreachable(err);
  if (unreachable) return toErrorReply(unreachable, requestId, log);
  if (err instanceof HttpError && err.status < 500) {
    const error: ErrorEnvelope['error'] = { code: err.status, message: err.message };
    if (err.metadata) error.metadata = err.metadata;
    return { status: err.status, headers: { ...err.headers }, body: { error, ...err.envelope } };
  }
  const status = err instanceof HttpError ? err.status : 500;
  const deliberate = err instanceof HttpError && err.status !== 500;
  const message = deliberate ? err.message : 'Internal server error';
  log(JSON.stringify({
    level: 'error',
    request_id: requestId,
    status,
    error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
  }));
  return {
    status,
    headers: err instanceof HttpError ? { ...err.headers } : {},
    body: { error: { code: status, message, metadata: { ...(deliberate ? err.metadata : {}), request_id: requestId } }, ...(deliberate ? err.envelope : {}) },
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
      return new ServiceUnavailableError('The gateway cannot reach its data store; try again shortly', { headers: { 'retry-after': '5' }, cause: err });
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

function defaultLog(line: string): void {
  console.error(line);
}

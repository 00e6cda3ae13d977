// A request's way through: route lookup (404/405), body size (413), authentication, validation,
// then the operation. Never throws: every failure comes back as the error envelope.
import type { GatewayRequest } from './request.js';
import { DEFAULT_MAX_BODY_BYTES, type OperationResult, type RouteDef } from './route.js';
import type { RouteMatch } from './router.js';
import { BadRequestError, echo, HttpError, MethodNotAllowedError, NotFoundError, PayloadTooLargeError, toErrorReply, withAnthropicType, withLifecycleMetadata, type ErrorEnvelope } from './errors.js';
import type { Authenticator } from './auth.js';
import { parseJsonBody, validate, withoutNullFields } from './validation.js';
import type { Logger } from '../logger.js';

/** What dispatch itself needs: the credential check, and where unexpected errors are logged. */
export interface DispatchDeps {
  authenticate: Authenticator;
  log: Logger;
}

const MAX_PATH_PARAM_BYTES = 512;

// Operations are typed per route in the route table; here they are called generically.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OperationTable = Record<string, (ctx: any) => Promise<OperationResult>>;

export async function dispatch(
  request: GatewayRequest,
  match: (method: string, path: string) => RouteMatch<RouteDef>,
  operations: OperationTable,
  deps: DispatchDeps,
  defer?: (work: Promise<unknown>) => void,
): Promise<OperationResult> {
  let flavour: RouteDef['errorMetadata'];
  try {
    const found = match(request.method, request.path);
    if (found.kind === 'not-found') throw new NotFoundError(`No route for ${echo(request.method, 16)} ${echo(request.path, 128)}`);
    if (found.kind === 'method-not-allowed') throw new MethodNotAllowedError(request.method, found.allowed);
    const { route, params } = found;
    flavour = route.errorMetadata;
    if (found.undecodable !== undefined) {
      throw new BadRequestError(`Invalid path parameter ${found.undecodable}: not valid percent-encoded UTF-8`, { metadata: { parameter: found.undecodable } });
    }
    // No identifier is this long; refusing here also keeps every store key within DynamoDB's key size limits.
    for (const [name, value] of Object.entries(params)) {
      if (Buffer.byteLength(value) > MAX_PATH_PARAM_BYTES) throw new NotFoundError(`Not found: path parameter ${name} is longer than ${MAX_PATH_PARAM_BYTES} bytes`);
    }
    checkPathParams(route, params);
    const maxBytes = route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    if (request.body && request.body.length > maxBytes) throw new PayloadTooLargeError(maxBytes);
    const principal = await deps.authenticate(request.headers, route);
    if (route.body) refuseEncodedBody(request.headers['content-encoding']);
    const parsed = route.body ? parseJsonBody(request.body, maxBytes) : undefined;
    const body = route.body ? validate(route.body, route.nullFieldsAbsent ? withoutNullFields(parsed) : parsed, 'body') : undefined;
    const query = route.query ? validate(route.query, request.query, 'query') : undefined;
    const operation = operations[route.operationId];
    if (!operation) throw new Error(`no operation registered for ${route.operationId}`);
    const result = await operation({ request, params, body, query, principal, ...(defer ? { defer } : {}) });
    if (result.kind !== 'stream' && result.status === undefined && route.successStatus !== undefined) {
      return { ...result, status: route.successStatus };
    }
    return result;
  } catch (err) {
    const reply = toErrorReply(err, request.requestId, deps.log);
    return { status: reply.status, headers: reply.headers, body: flavoured(reply.body, flavour) };
  }
}

/**
 * A compressed body (Content-Encoding gzip, br …) is not decoded here: refused with 415 saying so (RFC 9110
 * 15.5.16), rather than a 400 about bytes that are not UTF-8 or JSON.
 */
function refuseEncodedBody(encoding: string | undefined): void {
  if (encoding === undefined) return;
  const codings = encoding.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length > 0) throw new HttpError(415, `Unsupported Content-Encoding "${echo(encoding, 32)}": send the body uncompressed`);
}

function flavoured(body: ErrorEnvelope, flavour: RouteDef['errorMetadata']): ErrorEnvelope {
  if (flavour === 'lifecycle') return withLifecycleMetadata(body);
  if (flavour === 'anthropic') return withAnthropicType(body);
  return body;
}

/**
 * Every path parameter against the pattern its route declares, before authentication and any store access.
 * The 400 names the parameter and the expected form but never echoes the value.
 */
function checkPathParams(route: RouteDef, params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    const rule = route.params?.[name];
    if (!rule) throw new Error(`route ${route.operationId} declares no pattern for path parameter ${name}`);
    if (!rule.pattern.test(value)) throw new BadRequestError(`Invalid path parameter ${name}: expected ${rule.expected}`, { metadata: { parameter: name } });
  }
}
